/// How a chunk's storage reserved from a prediction is sized and grows past it.
///
/// The chunk after a full one reserves its arenas' bytes and its to-many targets from the full one's live counts
/// (see ``Column/reserveCapacity(slotCount:like:)``): objects appended one after another are usually alike, so the
/// prediction is close. The margin is small: every byte reserved and never written is still memory — a replay's
/// prefaulter populates the heap's top, reservations included (h91: an eighth's margin was 58 MB of big1m's state).
/// A storage whose values outgrow the prediction grows once to an eighth more than it needs, not to twice its
/// capacity; a second overflow means the prediction was wrong, and the array doubles from then on as any array does.
enum ReservedGrowth {
    /// The room reserved for a storage predicted to hold `count` elements: `count` and a sixty-fourth more.
    @inline(__always)
    static func reservation(for count: Int) -> Int { count + count / 64 }
}

extension Array {
    /// Makes room for `added` more elements of an array whose capacity was reserved from a prediction
    /// (`isReserved`; see ``ReservedGrowth``): when they do not fit, the capacity becomes an eighth more than the
    /// elements need, and `isReserved` is cleared, so that a later overflow doubles the array as `append` does.
    /// Nothing when they fit or the array was not reserved.
    @inline(__always)
    mutating func growPastReservation(adding added: Int, isReserved: inout Bool) {
        guard isReserved, added > capacity - count else { return }
        isReserved = false
        let needed = count + added
        reserveCapacity(needed + needed / 8)
    }
}
