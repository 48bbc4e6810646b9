import LiveCore
import LiveNet
import LiveSignal

/// How the line's and the call's services hand their registries' events to the
/// WebSockets: each event encoded once, as one frame shared by all its recipients; every
/// socket given its items in order, one task per event loop; a recipient whose queue
/// would hold more than the budget, or whose socket refuses the frame, is reported
/// (`onUnread`) to be closed and dropped, never silently skipped.
enum SignalFanOut {
    /// One outgoing item for one socket.
    enum Item {
        case frame(SharedBytes)
        /// Close with the anyRTC SDK's code in the close code (`LineCloseCode.base` + code).
        case close(reason: String, code: LiveCode)

        /// A text frame of `text`.
        static func text(_ text: String) -> Item {
            .frame(SharedBytes(WebSocketFrame(opcode: .text, payload: Array(text.utf8)).encoded()))
        }
    }

    /// Hands the items to their recipients' loops. Call it under the service's lock, so
    /// every recipient sees events in the registry's order. `onUnread` runs on a socket's
    /// loop (without the lock) for a recipient that does not read its events. Returns
    /// the recipients whose loop refused the task (they missed events).
    static func deliver(_ items: [(recipients: [LineParticipantID], item: Item)], sockets: [LineParticipantID: WebSocketConnection],
                        maxQueued: Int, label: String,
                        onUnread: @escaping @Sendable (LineParticipantID, WebSocketConnection) -> Void)
        -> [(LineParticipantID, WebSocketConnection)] {
        var queues: [LineParticipantID: [Item]] = [:]
        var order: [LineParticipantID] = []
        for (recipients, item) in items {
            for id in recipients where sockets[id] != nil {
                if queues[id] == nil { order.append(id) }
                queues[id, default: []].append(item)
            }
        }
        var batches: [ObjectIdentifier: (loop: EventLoop, work: [(LineParticipantID, WebSocketConnection, [Item])])] = [:]
        for id in order {
            guard let socket = sockets[id], let queued = queues[id] else { continue }
            batches[ObjectIdentifier(socket.loop), default: (socket.loop, [])].work.append((id, socket, queued))
        }
        var unreached: [(LineParticipantID, WebSocketConnection)] = []
        for (_, batch) in batches {
            let work = batch.work
            let queued = batch.loop.execute {
                for (id, socket, items) in work {
                    write(items, to: socket, id: id, maxQueued: maxQueued, label: label, onUnread: onUnread)
                }
            }
            if !queued { unreached += work.map { ($0.0, $0.1) } }
        }
        return unreached
    }

    /// Loop thread of `socket`.
    private static func write(_ items: [Item], to socket: WebSocketConnection, id: LineParticipantID, maxQueued: Int, label: String,
                              onUnread: @Sendable (LineParticipantID, WebSocketConnection) -> Void) {
        for item in items {
            guard socket.isOpen else { return }
            switch item {
            case .frame(let bytes):
                let connection = socket.connection
                guard connection.queuedBytes + bytes.count <= maxQueued, connection.write(bytes) else {
                    // A recipient that does not read its events is gone, not skipped.
                    Log.warning("\(label) \(id): \(connection.queuedBytes) bytes of events unread; closing it")
                    onUnread(id, socket)
                    return
                }
            case .close(let reason, let code):
                // The SDK's code in the close code, so the client reports why it ended.
                socket.close(code: LineCloseCode.base + UInt16(clamping: code.rawValue), reason: reason)
            }
        }
    }
}
