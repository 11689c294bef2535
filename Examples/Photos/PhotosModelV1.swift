public import EventGraph
public import Foundation

/// Version 1 of the PhotoLocations model: the original Locations app's Event, with its time stamp, position and
/// thumbnail, and no Photo entity. Seed 004 opens a store written with it using version 2 (``PhotoLocations/model``)
/// by inferred migration.
public enum PhotoLocationsV1 {
    /// An event of the original app.
    public final class Event: ManagedObject {
        override public class var entityName: String { "Event" }
        @Attribute public var timeStamp: Date = Date()
        @Attribute(.range(-90...90)) public var latitude: Double = 0
        @Attribute(.range(-180...180)) public var longitude: Double = 0
        @Transformable(by: ImageToDataTransformer()) public var thumbnail: Image?
    }

    /// The model, version 1.
    public static let model: ObjectModel = {
        do {
            return try ObjectModel(name: "Locations", version: "1", types: [Event.self])
        } catch {
            fatalError("the PhotoLocations version 1 model is invalid: \(error)")
        }
    }()
}
