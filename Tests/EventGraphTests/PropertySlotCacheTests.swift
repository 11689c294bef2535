import Testing

@testable import EventGraph

/// A model whose wrapper storage this file can name (`_title` is private to its declaration and this file).
private final class SlotNote: ManagedObject {
    @Attribute var title: String = "untitled"
    @Attribute var rank: Int64 = 0

    static var titleKeyPaths:
        (ReferenceWritableKeyPath<SlotNote, String>, ReferenceWritableKeyPath<SlotNote, Attribute<String>>)
    {
        (\SlotNote.title, \SlotNote._title)
    }
}

@Suite("Property accessors find their index by key path")
struct PropertySlotCacheTests {
    @Test("the key paths an accessor passes are cached and made immortal; reads and writes go on as before")
    func cachedKeyPathsAreImmortal() {
        let note = SlotNote()
        let (wrapped, storage) = SlotNote.titleKeyPaths
        #expect(!isImmortal(wrapped) && !isImmortal(storage))
        #expect(Attribute<String>[_enclosingInstance: note, wrapped: wrapped, storage: storage] == "untitled")
        #expect(PropertySlotCache.isCached(storage) && isImmortal(storage))
        #expect(isImmortal(wrapped))
        // Many retains and releases of the immortal key paths later, they still work and still index `title`.
        for round in 0..<10_000 {
            Attribute<String>[_enclosingInstance: note, wrapped: wrapped, storage: storage] = "note \(round % 3)"
            #expect(Attribute<String>[_enclosingInstance: note, wrapped: wrapped, storage: storage] == note.title)
        }
        #expect(note.title == "note 0" && note.rank == 0)
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
