import Glibc

/// The Linux epoll and eventfd calls. Swift's Glibc module map does not include
/// <sys/epoll.h> or <sys/eventfd.h>, and LiveNet has no C shim target, so the glibc
/// symbols are bound once through dlsym with their exact C signatures and the constants
/// are the kernel ABI values. `struct epoll_event` is packed on x86-64 (12 bytes, data at
/// offset 4) and naturally aligned elsewhere (16 bytes, data at offset 8), so events
/// are read and written as raw bytes at those offsets.
enum Epoll {
    static let input: UInt32 = 0x001
    static let output: UInt32 = 0x004
    static let error: UInt32 = 0x008
    static let hangUp: UInt32 = 0x010

    static let add: Int32 = 1
    static let delete: Int32 = 2
    static let modify: Int32 = 3

    /// O_CLOEXEC and O_NONBLOCK, which EPOLL_CLOEXEC, EFD_CLOEXEC and EFD_NONBLOCK equal.
    static let cloexec: Int32 = 0o2000000
    static let nonblock: Int32 = 0o4000

    #if arch(x86_64)
    static let eventStride = 12
    static let dataOffset = 4
    #else
    static let eventStride = 16
    static let dataOffset = 8
    #endif

    static let create = symbol("epoll_create1", as: (@convention(c) (Int32) -> Int32).self)
    static let control = symbol("epoll_ctl", as: (@convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32).self)
    static let wait = symbol("epoll_wait", as: (@convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32).self)
    static let eventfd = symbol("eventfd", as: (@convention(c) (UInt32, Int32) -> Int32).self)

    private static func symbol<Function>(_ name: String, as type: Function.Type) -> Function {
        guard let process = dlopen(nil, RTLD_NOW), let address = dlsym(process, name) else {
            fatalError("glibc has no \(name): LiveNet needs Linux epoll")
        }
        return unsafeBitCast(address, to: type)
    }

    /// Writes one `struct epoll_event` at `slot`.
    @inline(__always)
    static func store(events: UInt32, id: UInt64, at slot: UnsafeMutableRawPointer) {
        slot.storeBytes(of: events, toByteOffset: 0, as: UInt32.self)
        slot.storeBytes(of: id, toByteOffset: dataOffset, as: UInt64.self)
    }

    /// Reads the events and the registration id of entry `index` of an epoll_wait array.
    @inline(__always)
    static func load(_ array: UnsafeMutableRawPointer, index: Int) -> (events: UInt32, id: UInt64) {
        let slot = array + index * eventStride
        return (slot.loadUnaligned(as: UInt32.self), slot.loadUnaligned(fromByteOffset: dataOffset, as: UInt64.self))
    }
}
