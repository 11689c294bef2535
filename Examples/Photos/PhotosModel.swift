public import EventGraph
public import Foundation

// Seed 004: PhotoLocations — events with a transformable thumbnail, each with an optional photo whose image is
// stored externally and loaded only when the detail view opens.

/// A small raster image (the seed's UIImage).
public struct Image: Hashable, Sendable {
    public var width: Int
    public var height: Int
    /// Grey levels, row by row.
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height, "an image of \(width)×\(height) has \(width * height) pixels")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// A solid image.
    public static func filled(width: Int, height: Int, level: UInt8) -> Image {
        Image(width: width, height: height, pixels: Array(repeating: level, count: width * height))
    }

    /// A thumbnail: every `factor`-th pixel in both directions.
    public func scaled(by factor: Int) -> Image {
        let w = max(1, width / factor)
        let h = max(1, height / factor)
        var out: [UInt8] = []
        out.reserveCapacity(w * h)
        for y in 0..<h { for x in 0..<w { out.append(pixels[(y * factor) * width + x * factor]) } }
        return Image(width: w, height: h, pixels: out)
    }
}

/// The seed's `APLImageToDataTransformer`: an image as 8 bytes of size then its pixels.
public struct ImageToDataTransformer: AttributeTransformer {
    public init() {}

    public var name: String { "ImageToData" }

    public func encode(_ image: Image) throws -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8 + image.pixels.count)
        for value in [UInt32(image.width), UInt32(image.height)] {
            for shift in stride(from: 24, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
            }
        }
        return bytes + image.pixels
    }

    public func decode(_ bytes: [UInt8]) throws -> Image {
        guard bytes.count >= 8 else { throw CocoaError(.coderReadCorrupt) }
        func word(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        let width = word(0)
        let height = word(4)
        guard bytes.count == 8 + width * height else { throw CocoaError(.coderReadCorrupt) }
        return Image(width: width, height: height, pixels: Array(bytes[8...]))
    }
}

/// Where and when a photo was taken, with its thumbnail.
public final class Event: ManagedObject {
    @Attribute public var timeStamp: Date = Date()
    @Attribute(.range(-90...90)) public var latitude: Double = 0
    @Attribute(.range(-180...180)) public var longitude: Double = 0
    @Transformable(by: ImageToDataTransformer()) public var thumbnail: Image?
    @Relationship(inverse: "event", deleteRule: .cascade) public var photo: Photo?
}

/// The full-size photo of an event, stored outside the event's row and read from the log only when touched.
public final class Photo: ManagedObject {
    @Transformable(by: ImageToDataTransformer(), .externalStorage(threshold: 1024)) public var image: Image?
    @Relationship public var event: Event?
}
