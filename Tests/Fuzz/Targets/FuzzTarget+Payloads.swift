import LogFormat

extension FuzzTarget {
    static func runChangeset(_ input: UnsafeRawBufferPointer) {
        checkRoundTrip(input, decode: Changeset.init(decoding:), encode: { try $0.encoded() })
    }

    static func runSchema(_ input: UnsafeRawBufferPointer) {
        checkRoundTrip(input, decode: SchemaPayload.init(decoding:), encode: { try $0.encoded() })
    }

    static func runCheckpoint(_ input: UnsafeRawBufferPointer) {
        guard let selector = input.first else { return }
        let payload = UnsafeRawBufferPointer(rebasing: input.dropFirst())
        // 0–2 as before; 3: a checkpoint directory (format 1.3/1.4); 4: an index chunk (format 1.4).
        switch selector % 5 {
        case 0: checkRoundTrip(payload, decode: CheckpointBegin.init(decoding:), encode: { try $0.encoded() })
        case 1: checkRoundTrip(payload, decode: CheckpointChunk.init(decoding:), encode: { try $0.encoded() })
        case 2: checkRoundTrip(payload, decode: CheckpointEnd.init(decoding:), encode: { try $0.encoded() })
        case 3: checkRoundTrip(payload, decode: CheckpointDirectory.init(decoding:), encode: { try $0.encoded() })
        default: checkRoundTrip(payload, decode: CheckpointIndexChunk.init(decoding:), encode: { try $0.encoded() })
        }
    }

    /// Decodes `input`; when that succeeds, the value must encode, and its encoding must decode and encode to the
    /// same bytes (the encoding of a decoded value is canonical). Bytes are compared rather than values because a
    /// decoded `Double` may be NaN.
    private static func checkRoundTrip<Value>(
        _ input: UnsafeRawBufferPointer, decode: ([UInt8]) throws -> Value,
        encode: (Value) throws -> [UInt8]
    ) {
        guard let value = try? decode(Array(input)) else { return }
        let encoded: [UInt8]
        do {
            encoded = try encode(value)
        } catch {
            preconditionFailure("a decoded \(Value.self) does not encode: \(error)")
        }
        do {
            let again = try encode(try decode(encoded))
            precondition(again == encoded, "a \(Value.self) changes when its encoding is decoded and encoded again")
        } catch {
            preconditionFailure("the encoding of a decoded \(Value.self) does not decode: \(error)")
        }
    }
}
