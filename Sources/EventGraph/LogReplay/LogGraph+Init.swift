package import LogFormat

extension LogGraph {
    /// The graph a checkpoint describes: the object layer builds one from its own checkpoint records to compute
    /// the same ``StateDigest`` that tools compute by replaying the log.
    package init(schema: SchemaPayload, begin: CheckpointBegin, chunks: [CheckpointChunk]) {
        self.init()
        // Applying records built in memory cannot fail: nothing is decoded.
        try! apply(.schema(schema, byteOffset: 0))
        try! apply(.checkpointBegin(begin, byteOffset: 0))
        for chunk in chunks { try! apply(.checkpointChunk(chunk, byteOffset: 0)) }
    }
}
