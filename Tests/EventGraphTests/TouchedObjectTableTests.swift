import Testing

@testable import EventGraph

/// The in-place applier notes each object a transaction touches in a table found by key, several lookups per
/// operation; a transaction's inserts have sequential keys, which take neighbouring places.
@Suite("The applier's table of touched objects")
struct TouchedObjectTableTests {
    @Test func sequentialKeysAreNeighbours() {
        var table = ProbingTable<TouchedObject>()
        let keys = 1_001...4_000 as ClosedRange<UInt64>
        table.reserveCapacity(keys.count)
        for (place, key) in keys.enumerated() {
            table.update(TouchedObject(key: key, entityIndex: 1, isDeleted: false, place: place))
        }
        var neighbours = 0
        for key in keys.dropFirst() {
            let place = table.placeForTests(of: key)!
            let previous = table.placeForTests(of: key - 1)!
            if place == (previous + 1) % table.capacity { neighbours += 1 }
        }
        // Fibonacci hashing of each key alone spread them (a few in 1,000 neighbours).
        #expect(
            neighbours * 10 >= (keys.count - 1) * 8, "\(neighbours) of \(keys.count - 1) keys follow the one before")
        for (place, key) in keys.enumerated() { #expect(table[key]?.place == place) }
    }
}
