extension ParentContextStore {
    /// A child context's table is the one beneath its parent, and so are its unmounted stores.
    func unmountedStore(at storeIndex: UInt32) -> UnmountedStore? {
        parent.parentStore.unmountedStore(at: storeIndex)
    }

    var hasUnmountedStores: Bool { parent.parentStore.hasUnmountedStores }
}
