/// A descriptor registered in an event loop's epoll set (a connection or a listener).
/// Both methods are called on the loop's thread only.
protocol EventLoopSource: AnyObject {
    /// epoll reported `events` (EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP bits) for the
    /// source's descriptor.
    func handleEvents(_ events: UInt32)

    /// The loop is shutting down: release the descriptor and tell the owner.
    func closeForShutdown()
}
