/// One RTMP message as the chunk stream carries it (RTMP 1.0 §6.1): the header fields
/// and the payload bytes, before or after typed decoding (`RTMPMessage`).
public struct RTMPRawMessage: Equatable, Sendable {
    /// The chunk stream it arrived on or is to be sent on (2…65599).
    public var chunkStreamID: UInt32
    /// The message type id (1–6 protocol control, 8 audio, 9 video, 18 data, 20 command…).
    public var typeID: UInt8
    /// The message stream id: 0 for the connection, the id `createStream` returned for
    /// a stream.
    public var messageStreamID: UInt32
    /// Milliseconds, modulo 2³² (timestamps wrap, RTMP 1.0 §5.3.1.2.1).
    public var timestamp: UInt32
    public var payload: [UInt8]

    public init(chunkStreamID: UInt32, typeID: UInt8, messageStreamID: UInt32, timestamp: UInt32, payload: [UInt8]) {
        self.chunkStreamID = chunkStreamID
        self.typeID = typeID
        self.messageStreamID = messageStreamID
        self.timestamp = timestamp
        self.payload = payload
    }
}

/// The chunk stream ids LiveLine sends on (the ones nginx-rtmp uses; any 2…65599 is legal).
public enum RTMPChunkStreamID {
    /// Protocol control and user control messages (RTMP 1.0 §5.4: chunk stream 2).
    public static let control: UInt32 = 2
    /// Commands on message stream 0 (connect, createStream, _result).
    public static let command: UInt32 = 3
    /// Stream commands and data (publish, play, onStatus, @setDataFrame).
    public static let streamCommand: UInt32 = 5
    public static let audio: UInt32 = 6
    public static let video: UInt32 = 7
}
