extension Array {
    /// `Array(unsafeUninitializedCapacity:initializingWith:)` for a count that may be 0: an empty array is `[]`
    /// and `initializer` is not called.
    ///
    /// The standard library's initializer does not allocate for a capacity of 0: it hands out the one empty-array
    /// storage every empty array shares and writes its count (to 0, as it already is), a data race with every thread
    /// that reads an empty array at that moment, which the thread sanitizer reports (`Concurrency.md`, rule 5). Every
    /// array this package makes without initializing it first is made here.
    @inlinable
    package init(
        uninitializedCount count: Int,
        initializingWith initializer: (inout UnsafeMutableBufferPointer<Element>, inout Int) throws -> Void
    ) rethrows {
        guard count > 0 else {
            self = []
            return
        }
        self = try Array(unsafeUninitializedCapacity: count, initializingWith: initializer)
    }
}
