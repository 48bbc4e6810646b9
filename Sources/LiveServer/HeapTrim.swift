import Glibc
import LiveNet
import Synchronization

/// Gives freed heap memory back to the system after a connection that held a lot of
/// it closes. glibc keeps freed blocks in its arenas (one per loop thread here) for
/// reuse, so a burst of large unfinished messages would otherwise stay in the
/// process's resident size long after the connections are gone (measured: 282 of
/// 327 MB). Requests within `delay` of each other coalesce into one `malloc_trim`.
enum HeapTrim {
    /// A connection that held at least this many bytes asks for a trim when it closes.
    static let threshold = 1 << 20
    static let delay = Duration.milliseconds(200)
    private static let pending = Atomic<Bool>(false)
    /// glibc's `malloc_trim` (declared in <malloc.h>, which the Glibc module does not
    /// import), looked up once; nil on a C library without it.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    /// Trims on `loop` after `delay`, unless a trim is already due.
    static func request(on loop: EventLoop) {
        guard let mallocTrim, pending.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        loop.schedule(after: delay) {
            pending.store(false, ordering: .relaxed)
            _ = mallocTrim(0)
        }
    }
}
