internal import CPrefetch

extension Array {
    /// Starts loading the element at `index` without waiting for it (a hint: ``eg_prefetch``); nothing past the
    /// end.
    ///
    /// The address is taken in a closure that calls nothing and used after it: a call inside made the array be
    /// retained and released around it (two atomic instructions, which wait for the loads before them). A prefetch
    /// of an address never faults.
    @inline(__always)
    func prefetchElement(at index: Int) {
        guard index >= 0, index < count, let base = withUnsafeBufferPointer({ $0.baseAddress }) else { return }
        eg_prefetch(UnsafeRawPointer(base + index))
    }
}
