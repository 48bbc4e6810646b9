/// One header field as it appeared (or will appear) on the wire.
public struct HTTPHeader: Equatable, Sendable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// Header fields in wire order; names compare case-insensitively (RFC 9110 §5.1).
public struct HTTPHeaders: Equatable, Sendable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [HTTPHeader] = []

    public init() {}

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { HTTPHeader(name: $0.0, value: $0.1) }
    }

    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[HTTPHeader]> { fields.makeIterator() }

    /// The first value of `name`, nil when absent.
    public subscript(name: String) -> String? {
        fields.first { Self.same($0.name, name) }?.value
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { Self.same($0.name, name) }.map(\.value)
    }

    /// The comma-separated tokens of every `name` field, lowercased ("Connection: close").
    public func tokens(_ name: String) -> [String] {
        values(name).flatMap { $0.split(separator: ",") }.map {
            $0.trimmingCharacters(in: " \t").lowercased()
        }.filter { !$0.isEmpty }
    }

    public func contains(_ name: String) -> Bool { fields.contains { Self.same($0.name, name) } }

    /// Appends a field (a name may repeat).
    public mutating func add(_ name: String, _ value: String) {
        fields.append(HTTPHeader(name: name, value: value))
    }

    /// Replaces every `name` field with one.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    public mutating func remove(_ name: String) {
        fields.removeAll { Self.same($0.name, name) }
    }

    static func same(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && a.lowercased() == b.lowercased()
    }
}

private extension Substring {
    func trimmingCharacters(in set: String) -> Substring {
        var slice = self
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return slice
    }
}
