/// A piece of HTML whose interpolated strings are escaped as they go in, so that no value reaches the page as
/// markup by omission. Markup made elsewhere enters only through `trusted(_:)`.
struct HTML: Sendable, ExpressibleByStringInterpolation {
    private(set) var markup: String

    init(stringLiteral literal: String) {
        markup = literal
    }

    init(stringInterpolation interpolation: Interpolation) {
        markup = interpolation.markup
    }

    private init(markup: String) {
        self.markup = markup
    }

    /// Markup produced by our own code (the QR code's SVG), taken as is.
    static func trusted(_ markup: String) -> HTML {
        HTML(markup: markup)
    }

    struct Interpolation: StringInterpolationProtocol {
        var markup = ""

        init(literalCapacity: Int, interpolationCount: Int) {
            markup.reserveCapacity(literalCapacity + 16 * interpolationCount)
        }

        mutating func appendLiteral(_ literal: String) {
            markup += literal
        }

        mutating func appendInterpolation(_ text: String) {
            markup += text.htmlEscaped
        }

        mutating func appendInterpolation(_ number: Int) {
            markup += String(number)
        }

        mutating func appendInterpolation(_ html: HTML) {
            markup += html.markup
        }

        mutating func appendInterpolation(_ parts: [HTML]) {
            for part in parts {
                markup += part.markup
            }
        }
    }
}
