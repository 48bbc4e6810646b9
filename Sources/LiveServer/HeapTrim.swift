import Glibc
import LiveNet
import Synchronization

/// Gives freed heap memory back to the system after a connection that held a lot of
/// it closes. glibc keeps freed blocks in its arenas (one per loop thread here) for
/// reuse, so a burst of large unfinished messages would otherwise stay in the
/// process's resident size long after the connections are gone (measured: 282 of
/// 327 MB). Requests within `delay` of each other coalesce into one `malloc_trim`.
///
/// One per server (its pending trim dies with the server's loops); any thread.
final class HeapTrim: Sendable {
    /// A connection that held at least this many bytes asks for a trim when it closes.
    static let threshold = 1 << 20
    static let delay = Duration.milliseconds(200)
    /// glibc's `malloc_trim` (declared in <malloc.h>, which the Glibc module does not
    /// import), looked up once; nil on a C library without it.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()
    private let pending = Atomic<Bool>(false)

    /// Trims on `loop` after `delay`, unless a trim is already due.
    func request(on loop: EventLoop) {
        guard let mallocTrim = Self.mallocTrim,
              pending.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        loop.schedule(after: Self.delay) { [self] in
            pending.store(false, ordering: .relaxed)
            _ = mallocTrim(0)
        }
    }
}
