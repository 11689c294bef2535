import Foundation
import TestSupport
import Testing

@testable import LogFormat

/// The seed of the random payload tests (printed once; `EG_TEST_SEED` replays it).
let randomPayloadSeed = TestSeed.make(for: "PayloadEncoding random tests")

/// Random payloads whose numbers favour the edges: zero, small values, and the extremes of each type.
struct RandomPayloads {
    var generator: SeededGenerator

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &generator) < percent }

    mutating func uint64() -> UInt64 {
        switch Int.random(in: 0..<6, using: &generator) {
        case 0: 0
        case 1: .random(in: 0..<128, using: &generator)
        case 2: .random(in: 0..<(1 << 21), using: &generator)
        case 3: .max - .random(in: 0..<2, using: &generator)
        default: generator.next() >> UInt64.random(in: 0..<64, using: &generator)
        }
    }

    mutating func int64() -> Int64 {
        let magnitude = Int64(truncatingIfNeeded: uint64())
        return chance(50) ? magnitude : ~magnitude
    }

    mutating func bytes(maxCount: Int) -> [UInt8] {
        (0..<Int.random(in: 0...maxCount, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    mutating func string() -> String {
        let pieces = ["", "a", "Zé", "日本", "𝄞", "👩‍👩‍👧", " ", "\u{0}", "name"]
        return (0..<Int.random(in: 0..<4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }
            .joined()
    }

    mutating func double() -> Double {
        let specials: [Double] = [0, -0.0, .infinity, -.infinity, .nan, .leastNonzeroMagnitude, 1e308]
        return chance(20) ? specials.randomElement(using: &generator)! : Double(bitPattern: generator.next())
    }

    mutating func attributeValue() -> AttributeValue {
        switch Int.random(in: 0..<16, using: &generator) {
        case 0: .null
        case 1: .int16(Int16(truncatingIfNeeded: int64()))
        case 2: .int32(Int32(truncatingIfNeeded: int64()))
        case 3: .int64(int64())
        case 4: .double(double())
        case 5: .float(Float(bitPattern: UInt32(truncatingIfNeeded: generator.next())))
        case 6: .bool(chance(50))
        case 7: .string(string())
        case 8: .date(double())
        case 9: .uuid(LogUUID(high: generator.next(), low: generator.next()))
        case 10: .url(string())
        case 11: .decimal(string())
        case 12: .binary(bytes(maxCount: 40))
        case 13: .transformable(bytes(maxCount: 40))
        default:
            .blob(
                BlobReference(
                    transactionID: uint64(), index: UInt32(truncatingIfNeeded: uint64()), byteCount: uint64()))
        }
    }

    mutating func reference(foreignStoreCount: Int) -> ObjectReference {
        ObjectReference(
            storeIndex: UInt32.random(in: 0...UInt32(foreignStoreCount), using: &generator),
            entityIndex: chance(90)
                ? .random(in: 0..<8, using: &generator)
                : .random(in: 0..<UInt32(LogLimits.maxEntityCount), using: &generator),
            key: uint64())
    }

    mutating func references(foreignStoreCount: Int) -> [ObjectReference] {
        (0..<Int.random(in: 0..<4, using: &generator)).map { _ in reference(foreignStoreCount: foreignStoreCount) }
    }

    mutating func changes(foreignStoreCount: Int) -> [PropertyChange] {
        (0..<Int.random(in: 0..<6, using: &generator)).map { _ in
            let value: PropertyValue =
                switch Int.random(in: 0..<5, using: &generator) {
                case 0: .toOne(nil)
                case 1: .toOne(reference(foreignStoreCount: foreignStoreCount))
                case 2: .toMany(references(foreignStoreCount: foreignStoreCount))
                default: .attribute(attributeValue())
                }
            let index: UInt32 =
                chance(90) ? .random(in: 0..<16, using: &generator) : UInt32(LogLimits.maxPropertyCount - 1)
            return PropertyChange(propertyIndex: index, value: value)
        }
    }

    mutating func operation(foreignStoreCount: Int) -> ChangeOperation {
        let object = reference(foreignStoreCount: foreignStoreCount)
        switch Int.random(in: 0..<4, using: &generator) {
        case 0: return .insert(object, changes(foreignStoreCount: foreignStoreCount))
        case 1: return .update(object, changes(foreignStoreCount: foreignStoreCount))
        case 2:
            return .relate(
                object, propertyIndex: .random(in: 0..<16, using: &generator),
                added: references(foreignStoreCount: foreignStoreCount),
                removed: references(foreignStoreCount: foreignStoreCount))
        default: return .delete(object)
        }
    }

    mutating func foreignStores() -> [LogUUID] {
        (0..<Int.random(in: 0..<3, using: &generator)).map { _ in LogUUID(high: generator.next(), low: generator.next())
        }
    }

    mutating func changeset() -> Changeset {
        let stores = foreignStores()
        return Changeset(
            transactionID: uint64(), commitTimeMicroseconds: int64(), author: string(), nextKey: uint64(),
            foreignStores: stores,
            operations: (0..<Int.random(in: 0..<12, using: &generator)).map { _ in
                operation(foreignStoreCount: stores.count)
            })
    }

    mutating func checkpointChunk() -> CheckpointChunk {
        let stores = foreignStores()
        return CheckpointChunk(
            foreignStores: stores,
            records: (0..<Int.random(in: 0..<8, using: &generator)).map { _ in
                ObjectRecord(
                    object: reference(foreignStoreCount: stores.count),
                    properties: changes(foreignStoreCount: stores.count))
            })
    }

    /// `bytes` with one random damage: a changed byte, a flipped bit, an inserted or removed byte, or a cut.
    mutating func mutate(_ bytes: [UInt8]) -> [UInt8] {
        var result = bytes
        let index = Int.random(in: 0..<result.count, using: &generator)
        switch Int.random(in: 0..<5, using: &generator) {
        case 0: result[index] = .random(in: 0...255, using: &generator)
        case 1: result[index] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
        case 2: result.insert(.random(in: 0...255, using: &generator), at: index)
        case 3: result.remove(at: index)
        default: result.removeLast(result.count - index)
        }
        return result
    }
}

/// A NaN compares unequal to itself, so comparisons go through a copy where each NaN is replaced by its bits.
private func comparable(_ value: AttributeValue) -> AttributeValue {
    switch value {
    case .double(let number) where number.isNaN: .string("double NaN \(number.bitPattern)")
    case .date(let number) where number.isNaN: .string("date NaN \(number.bitPattern)")
    case .float(let number) where number.isNaN: .string("float NaN \(number.bitPattern)")
    default: value
    }
}

private func comparable(_ changes: [PropertyChange]) -> [PropertyChange] {
    changes.map { change in
        guard case .attribute(let value) = change.value else { return change }
        return PropertyChange(propertyIndex: change.propertyIndex, value: .attribute(comparable(value)))
    }
}

private func comparable(_ changeset: Changeset) -> Changeset {
    var copy = changeset
    copy.operations = changeset.operations.map { operation in
        switch operation {
        case .insert(let object, let changes): .insert(object, comparable(changes))
        case .update(let object, let changes): .update(object, comparable(changes))
        default: operation
        }
    }
    return copy
}

extension PayloadEncodingTests {
    @Suite("Seeded random payloads")
    struct RandomRoundTrips {
        @Test("random changesets survive a round trip", arguments: 0..<4)
        func changesets(batch: Int) throws {
            let seed = randomPayloadSeed &+ UInt64(batch)
            var random = RandomPayloads(generator: SeededGenerator(seed: seed))
            for iteration in 0..<250 {
                let changeset = random.changeset()
                let bytes = try changeset.encoded()
                let decoded = try Changeset(decoding: bytes)
                #expect(
                    comparable(decoded) == comparable(changeset),
                    "seed \(randomPayloadSeed), batch \(batch), iteration \(iteration)")
                #expect(
                    try decoded.encoded() == bytes, "seed \(randomPayloadSeed), batch \(batch), iteration \(iteration)")
            }
        }

        @Test("the room the encoder reserves holds every random changeset (no regrowth)", arguments: 0..<2)
        func estimatedByteCounts(batch: Int) throws {
            let seed = randomPayloadSeed &+ 100 &+ UInt64(batch)
            var random = RandomPayloads(generator: SeededGenerator(seed: seed))
            for iteration in 0..<250 {
                var changeset = random.changeset()
                if iteration % 3 == 0 {
                    changeset.sequenceReservations = [
                        SequenceReservation(name: random.string(), lastValue: random.uint64())
                    ]
                }
                if iteration % 5 == 0 {
                    // A bulk insert's shape: long strings and long to-many lists.
                    let text = String(repeating: "wörds ", count: 200)
                    changeset.operations.append(
                        .insert(
                            ObjectReference(entityIndex: 1, key: .max),
                            [
                                PropertyChange(propertyIndex: 0, value: .attribute(.string(text))),
                                PropertyChange(
                                    propertyIndex: 1,
                                    value: .toMany(
                                        (0..<300).map { ObjectReference(entityIndex: 2, key: .max - UInt64($0)) })),
                            ]))
                }
                let bytes = try changeset.encoded()
                #expect(
                    changeset.estimatedEncodedByteCount >= bytes.count,
                    "seed \(randomPayloadSeed), batch \(batch), iteration \(iteration)")
            }
        }

        @Test("random checkpoint chunks survive a round trip")
        func checkpointChunks() throws {
            var random = RandomPayloads(generator: SeededGenerator(seed: randomPayloadSeed ^ 0xC4EC))
            for iteration in 0..<250 {
                let chunk = random.checkpointChunk()
                let bytes = try chunk.encoded()
                #expect(
                    try CheckpointChunk(decoding: bytes).encoded() == bytes, "seed \(randomPayloadSeed), \(iteration)")
            }
        }

        /// Decoding is strict (shortest varints, known tags and flags, no trailing bytes), so every byte string
        /// that decodes at all is the encoding of what it decodes to.
        @Test(
            "damaged payloads never crash, and whatever decodes re-encodes to the same bytes",
            arguments: PayloadKind.allCases)
        func damage(kind: PayloadKind) throws {
            var random = RandomPayloads(
                generator: SeededGenerator(
                    seed: randomPayloadSeed ^ UInt64(PayloadKind.allCases.firstIndex(of: kind)! + 1) << 32))
            var originals = [try kind.sampleBytes()]
            if kind == .changeset { originals += try (0..<20).map { _ in try random.changeset().encoded() } }
            if kind == .checkpointChunk {
                originals += try (0..<20).map { _ in try random.checkpointChunk().encoded() }
            }
            var decodedCount = 0
            for original in originals {
                for _ in 0..<200 {
                    var damaged = random.mutate(original)
                    if random.chance(30) && !damaged.isEmpty { damaged = random.mutate(damaged) }
                    do {
                        let reencoded = try kind.reencode(damaged)
                        decodedCount += 1
                        #expect(reencoded == damaged, "seed \(randomPayloadSeed): \(damaged)")
                    } catch {
                        #expect(error.code == .malformedPayload || error.code == .unsupportedVersion)
                    }
                }
            }
            print(
                "PayloadEncoding damage test (\(kind)): \(decodedCount) of \(originals.count * 200) damaged copies still decoded"
            )
        }
    }
}
