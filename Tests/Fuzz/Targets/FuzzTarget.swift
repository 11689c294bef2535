/// The decoders the fuzzers drive, one entry point each; `scripts/fuzz` runs them under libFuzzer and
/// `FuzzCorpusTests` replays the checked-in corpus and findings through the same entry points.
///
/// An entry point accepts any bytes. Throwing is the expected answer to bad input; a trap, a sanitizer report or an
/// allocation beyond the limits is a finding.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// The file header (both copies), through ``LogFormat/LogReader/init(path:)``.
    case header
    /// Frames after a valid header, through the reader's scan and single-frame read.
    case frame
    /// A changeset payload, decoded and re-encoded.
    case changeset
    /// A schema payload, decoded and re-encoded.
    case schema
    /// A checkpoint begin, chunk or end payload (chosen by the first byte), decoded and re-encoded.
    case checkpoint
    /// A whole file opened read-only: the reader's scan with every payload decoded, then the object layer's
    /// read-only view with the model recorded in the file.
    case open

    /// Runs one input.
    public func run(_ input: UnsafeRawBufferPointer) {
        switch self {
        case .header: Self.runHeader(input)
        case .frame: Self.runFrames(input)
        case .changeset: Self.runChangeset(input)
        case .schema: Self.runSchema(input)
        case .checkpoint: Self.runCheckpoint(input)
        case .open: Self.runOpen(input)
        }
    }

    /// Runs one input given as an array.
    public func run(_ input: [UInt8]) {
        input.withUnsafeBytes { run($0) }
    }
}
