import Foundation

/// A recursive-descent evaluator for arithmetic: numbers (also `1.5e3`), `+ - * / % ^` (and `**`,
/// `×`, `÷`), unary signs, parentheses, the constants `pi` and `e`, and a fixed set of functions.
/// Input length and nesting depth are bounded; nothing is ever executed as code.
public enum ArithmeticExpression {
    /// Why an expression could not be evaluated.
    public struct Failure: Error, Sendable, Hashable {
        /// A readable explanation, for example `division by zero`.
        public var message: String
    }

    /// The longest expression accepted, in characters.
    public static let maxLength = 1_000
    /// The deepest nesting of parentheses, signs and powers accepted.
    public static let maxDepth = 64

    /// Evaluates `text`.
    /// - Throws: `Failure` for syntax errors, unknown names, division by zero and non-finite results.
    public static func evaluate(_ text: String) throws(Failure) -> Double {
        guard text.count <= maxLength else { throw Failure(message: "expression longer than \(maxLength) characters") }
        var parser = Parser(tokens: try tokenize(text))
        let value = try parser.expression()
        guard parser.isAtEnd else { throw Failure(message: "unexpected \(parser.currentDescription)") }
        guard value.isFinite else { throw Failure(message: "the result is not a finite number") }
        return value
    }

    private enum Token: Equatable {
        case number(Double)
        case name(String)
        case symbol(Character)
    }

    private static func tokenize(_ text: String) throws(Failure) -> [Token] {
        var tokens: [Token] = []
        let characters = Array(text)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character.isWhitespace {
                index += 1
            } else if character.isASCII, character.isNumber || character == "." {
                let start = index
                while index < characters.count, characters[index].isASCII,
                      characters[index].isNumber || characters[index] == "." {
                    index += 1
                }
                if index < characters.count, characters[index] == "e" || characters[index] == "E" {
                    var end = index + 1
                    if end < characters.count, characters[end] == "+" || characters[end] == "-" { end += 1 }
                    if end < characters.count, characters[end].isASCII, characters[end].isNumber {
                        while end < characters.count, characters[end].isASCII, characters[end].isNumber { end += 1 }
                        index = end
                    }
                }
                let literal = String(characters[start..<index])
                guard let value = Double(literal) else { throw Failure(message: "invalid number \"\(literal)\"") }
                tokens.append(.number(value))
            } else if character.isASCII, character.isLetter {
                let start = index
                while index < characters.count, characters[index].isASCII,
                      characters[index].isLetter || characters[index].isNumber {
                    index += 1
                }
                tokens.append(.name(String(characters[start..<index]).lowercased()))
            } else if character == "*", index + 1 < characters.count, characters[index + 1] == "*" {
                tokens.append(.symbol("^"))
                index += 2
            } else if "+-*/%^(),×÷−".contains(character) {
                let normalized: Character = switch character {
                case "×": "*"
                case "÷": "/"
                case "−": "-"
                default: character
                }
                tokens.append(.symbol(normalized))
                index += 1
            } else {
                throw Failure(message: "unexpected character \"\(character)\"")
            }
        }
        return tokens
    }

    private struct Parser {
        let tokens: [Token]
        var position = 0
        var depth = 0

        init(tokens: [Token]) {
            self.tokens = tokens
        }

        var isAtEnd: Bool { position == tokens.count }

        var currentDescription: String {
            guard position < tokens.count else { return "end of expression" }
            return switch tokens[position] {
            case .number(let value): "number \(CalculatorTool.format(value))"
            case .name(let name): "\"\(name)\""
            case .symbol(let symbol): "\"\(symbol)\""
            }
        }

        mutating func take(_ symbol: Character) -> Bool {
            guard position < tokens.count, tokens[position] == .symbol(symbol) else { return false }
            position += 1
            return true
        }

        mutating func expect(_ symbol: Character) throws(Failure) {
            guard take(symbol) else { throw Failure(message: "expected \"\(symbol)\" but found \(currentDescription)") }
        }

        mutating func descend() throws(Failure) {
            depth += 1
            guard depth <= ArithmeticExpression.maxDepth else { throw Failure(message: "expression nested too deeply") }
        }

        /// expression := term (("+" | "-") term)*
        mutating func expression() throws(Failure) -> Double {
            var value = try term()
            while true {
                if take("+") {
                    value += try term()
                } else if take("-") {
                    value -= try term()
                } else {
                    return value
                }
            }
        }

        /// term := unary (("*" | "/" | "%") unary)*
        mutating func term() throws(Failure) -> Double {
            var value = try unary()
            while true {
                if take("*") {
                    value *= try unary()
                } else if take("/") {
                    let divisor = try unary()
                    guard divisor != 0 else { throw Failure(message: "division by zero") }
                    value /= divisor
                } else if take("%") {
                    let divisor = try unary()
                    guard divisor != 0 else { throw Failure(message: "division by zero") }
                    value = value.truncatingRemainder(dividingBy: divisor)
                } else {
                    return value
                }
            }
        }

        /// unary := ("+" | "-") unary | power
        mutating func unary() throws(Failure) -> Double {
            try descend()
            defer { depth -= 1 }
            if take("-") { return -(try unary()) }
            if take("+") { return try unary() }
            return try power()
        }

        /// power := primary ("^" unary)?   (right-associative, binds tighter than a leading sign)
        mutating func power() throws(Failure) -> Double {
            let base = try primary()
            guard take("^") else { return base }
            return Foundation.pow(base, try unary())
        }

        /// primary := number | constant | function "(" arguments ")" | "(" expression ")"
        mutating func primary() throws(Failure) -> Double {
            guard position < tokens.count else { throw Failure(message: "the expression ends too early") }
            let token = tokens[position]
            position += 1
            switch token {
            case .number(let value):
                return value
            case .symbol("("):
                let value = try expression()
                try expect(")")
                return value
            case .name(let name):
                if let constant = ArithmeticExpression.constants[name] { return constant }
                guard take("(") else { throw Failure(message: "unknown name \"\(name)\"") }
                var arguments = [try expression()]
                while take(",") { arguments.append(try expression()) }
                try expect(")")
                return try ArithmeticExpression.apply(name, to: arguments)
            case .symbol(let symbol):
                throw Failure(message: "unexpected \"\(symbol)\"")
            }
        }
    }

    private static let constants: [String: Double] = ["pi": Double.pi, "e": M_E]

    private static func apply(_ name: String, to arguments: [Double]) throws(Failure) -> Double {
        if name == "min" || name == "max" {
            return name == "min" ? arguments.min() ?? 0 : arguments.max() ?? 0
        }
        guard arguments.count == 1 else { throw Failure(message: "\(name) takes one argument") }
        let x = arguments[0]
        switch name {
        case "sqrt":
            guard x >= 0 else { throw Failure(message: "square root of a negative number") }
            return x.squareRoot()
        case "abs": return abs(x)
        case "round": return x.rounded()
        case "floor": return x.rounded(.down)
        case "ceil": return x.rounded(.up)
        case "ln", "log":
            guard x > 0 else { throw Failure(message: "logarithm of a number that is not positive") }
            return Foundation.log(x)
        case "log10":
            guard x > 0 else { throw Failure(message: "logarithm of a number that is not positive") }
            return Foundation.log10(x)
        case "exp": return Foundation.exp(x)
        case "sin": return Foundation.sin(x)
        case "cos": return Foundation.cos(x)
        case "tan": return Foundation.tan(x)
        default: throw Failure(message: "unknown function \"\(name)\"")
        }
    }
}
