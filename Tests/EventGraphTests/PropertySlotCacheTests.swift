import Testing

@testable import EventGraph

/// A model whose wrapper storage this file can name (`_point` is private to its declaration and this file).
private final class SlotNote: ManagedObject {
    @Transformable(by: CodableTransformer<Point>()) var point: Point?
    @Attribute var rank: Int64 = 0

    static var pointKeyPaths:
        (
            ReferenceWritableKeyPath<SlotNote, Point?>,
            ReferenceWritableKeyPath<SlotNote, Transformable<CodableTransformer<Point>>>
        )
    {
        (\SlotNote.point, \SlotNote._point)
    }
}

/// ``Attribute`` and ``Relationship`` find their index in their stamped wrapper (see `PropertyStampsTests`); a
/// ``Transformable``, whose wrapper holds its transformer, finds it by key path.
@Suite("Transformable accessors find their index by key path")
struct PropertySlotCacheTests {
    @Test("the key paths an accessor passes are cached and made immortal; reads and writes go on as before")
    func cachedKeyPathsAreImmortal() {
        let note = SlotNote()
        let (wrapped, storage) = SlotNote.pointKeyPaths
        typealias Wrapper = Transformable<CodableTransformer<Point>>
        #expect(!isImmortal(wrapped) && !isImmortal(storage))
        #expect(Wrapper[_enclosingInstance: note, wrapped: wrapped, storage: storage] == nil)
        #expect(PropertySlotCache.isCached(storage) && isImmortal(storage))
        #expect(isImmortal(wrapped))
        // Many retains and releases of the immortal key paths later, they still work and still index `point`.
        for round in 0..<3_000 {
            let point = Point(x: Double(round % 3), y: 1)
            Wrapper[_enclosingInstance: note, wrapped: wrapped, storage: storage] = point
            #expect(Wrapper[_enclosingInstance: note, wrapped: wrapped, storage: storage] == note.point)
        }
        #expect(note.point == Point(x: 2, y: 1) && note.rank == 0)
        #expect(PropertySlotCache.isCached(storage) && isImmortal(storage) && isImmortal(wrapped))
        // A key path that never went through an accessor is left alone.
        let other: AnyKeyPath = \String.utf8.count
        #expect(!isImmortal(other))
    }
}

/// Whether an object is immortal: a retain leaves its strong count as it was (and is not balanced, since it did
/// nothing); any other object's count goes up by one, and the retain is released again.
private func isImmortal(_ object: AnyObject) -> Bool {
    let reference = Unmanaged.passUnretained(object)
    let before = swiftRetainCount(reference.toOpaque())
    _ = reference.retain()
    let after = swiftRetainCount(reference.toOpaque())
    if after != before { reference.release() }
    return after == before
}

@_silgen_name("swift_retainCount")
private func swiftRetainCount(_ object: UnsafeMutableRawPointer) -> Int
