/// The ordered properties of an AMF0 object or ECMA array (AMF0 §2.5, §2.10).
///
/// Order is kept because peers read it (onMetaData is shown in order, and some servers
/// expect `app` before `tcUrl`); lookup is linear, which is fastest for the handful of
/// keys a command carries.
public struct AMF0Object: Equatable, Sendable, ExpressibleByDictionaryLiteral {
    /// One property: a UTF-8 name (at most 65535 bytes) and its value.
    public struct Property: Equatable, Sendable {
        public var name: String
        public var value: AMF0Value

        public init(_ name: String, _ value: AMF0Value) {
            self.name = name
            self.value = value
        }
    }

    public var properties: [Property]

    public init(_ properties: [Property] = []) { self.properties = properties }

    public init(dictionaryLiteral elements: (String, AMF0Value)...) {
        properties = elements.map { Property($0.0, $0.1) }
    }

    /// The value of the first property called `name`; setting replaces it in place or
    /// appends a new property; setting nil removes every property of that name.
    public subscript(name: String) -> AMF0Value? {
        get { properties.first { $0.name == name }?.value }
        set {
            if let newValue {
                if let index = properties.firstIndex(where: { $0.name == name }) {
                    properties[index].value = newValue
                } else {
                    properties.append(Property(name, newValue))
                }
            } else {
                properties.removeAll { $0.name == name }
            }
        }
    }

    public var isEmpty: Bool { properties.isEmpty }
    public var count: Int { properties.count }
    public var names: [String] { properties.map(\.name) }
}
