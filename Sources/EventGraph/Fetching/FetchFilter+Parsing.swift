import Foundation
import LogFormat

extension FetchFilter {
    /// Parses a filter from text, the language of `egctl dump --where`.
    ///
    /// ```
    /// filter     := or
    /// or         := and ("or" and)*
    /// and        := unary ("and" unary)*
    /// unary      := "not" unary | "(" filter ")" | comparison
    /// comparison := name operator literal
    /// operator   := == | != | < | <= | > | >= | contains | beginsWith | endsWith
    /// literal    := integer | decimal number | "string" | true | false | nil | null | date("ISO 8601")
    /// ```
    ///
    /// Keywords and word operators are case-insensitive; `and` binds tighter than `or`. An integer literal is an
    /// `Int64` compared exactly (`identity == 9007199254740993` does not match 9007199254740992, as a `Double`
    /// would); a number with a fraction or exponent is a `Double`. Strings are in double quotes, with `\"` and `\\`
    /// as escapes. A date is ISO 8601 with or without fractional seconds, e.g. `date("2024-05-01T12:00:00Z")`.
    ///
    /// - Throws: ``EventGraphError/Code-swift.struct/invalidArgument`` naming the character offset of the first
    ///   thing that does not fit the grammar.
    public init(parsing text: String) throws(EventGraphError) {
        var parser = FilterParser(text: text)
        self = try parser.parseFilter()
    }
}

/// A recursive-descent parser over the tokens of a filter text.
private struct FilterParser {
    enum Token: Equatable {
        case word(String)
        case string(String)
        case symbol(String)
    }

    let text: String
    private var tokens: [(token: Token, offset: Int)] = []
    private var position = 0

    init(text: String) {
        self.text = text
    }

    mutating func parseFilter() throws(EventGraphError) -> FetchFilter {
        tokens = try Self.tokenize(text)
        guard !tokens.isEmpty else { throw failure("is empty", at: 0) }
        let filter = try parseOr()
        if position < tokens.count { throw failure("has an unexpected \(describe(tokens[position].token))") }
        return filter
    }

    private mutating func parseOr() throws(EventGraphError) -> FetchFilter {
        var operands = [try parseAnd()]
        while takeKeyword("or") { operands.append(try parseAnd()) }
        return operands.count == 1 ? operands[0] : .or(operands)
    }

    private mutating func parseAnd() throws(EventGraphError) -> FetchFilter {
        var operands = [try parseUnary()]
        while takeKeyword("and") { operands.append(try parseUnary()) }
        return operands.count == 1 ? operands[0] : .and(operands)
    }

    private mutating func parseUnary() throws(EventGraphError) -> FetchFilter {
        if takeKeyword("not") { return .not(try parseUnary()) }
        if take(.symbol("(")) {
            let inner = try parseOr()
            guard take(.symbol(")")) else { throw failure("misses a ')'") }
            return inner
        }
        return try parseComparison()
    }

    private mutating func parseComparison() throws(EventGraphError) -> FetchFilter {
        guard case .word(let name) = peek, !Self.keywords.contains(name.lowercased()) else {
            throw failure("expects an attribute name")
        }
        position += 1
        let comparison = try parseOperator()
        return .compare(name, comparison, StoredValue(try parseLiteral()))
    }

    private mutating func parseOperator() throws(EventGraphError) -> FetchFilter.Comparison {
        let spelling: String
        switch peek {
        case .symbol(let symbol): spelling = symbol
        case .word(let word): spelling = word.lowercased()
        default: throw failure("expects an operator (\(Self.operatorList))")
        }
        guard let comparison = Self.operators[spelling] else {
            throw failure("has '\(spelling)' where it expects an operator (\(Self.operatorList))")
        }
        position += 1
        return comparison
    }

    private mutating func parseLiteral() throws(EventGraphError) -> AttributeValue {
        guard let token = peek else { throw failure("expects a value") }
        switch token {
        case .string(let string):
            position += 1
            return .string(string)
        case .word(let word):
            if word.lowercased() == "date" { return try parseDate() }
            position += 1
            switch word.lowercased() {
            case "true": return .bool(true)
            case "false": return .bool(false)
            case "nil", "null": return .null
            default: break
            }
            if let integer = Int64(word) { return .int64(integer) }
            if word.first.map({ $0.isNumber || $0 == "-" || $0 == "+" || $0 == "." }) == true, let number = Double(word)
            {
                return .double(number)
            }
            position -= 1
            throw failure("has '\(word)' where it expects a number, \"string\", true, false, nil or date(\"…\")")
        case .symbol(let symbol):
            throw failure("has '\(symbol)' where it expects a value")
        }
    }

    private mutating func parseDate() throws(EventGraphError) -> AttributeValue {
        position += 1
        guard take(.symbol("(")), case .string(let text) = peek else {
            throw failure("expects a date as date(\"2024-05-01T12:00:00Z\")")
        }
        position += 1
        guard let date = Self.iso8601(text) else { throw failure("has \"\(text)\", which is not an ISO 8601 date") }
        guard take(.symbol(")")) else { throw failure("misses the ')' of date(…)") }
        return .date(date.timeIntervalSinceReferenceDate)
    }

    private static func iso8601(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }

    // MARK: Tokens

    private var peek: Token? { position < tokens.count ? tokens[position].token : nil }

    private mutating func take(_ token: Token) -> Bool {
        guard peek == token else { return false }
        position += 1
        return true
    }

    private mutating func takeKeyword(_ keyword: String) -> Bool {
        guard case .word(let word) = peek, word.lowercased() == keyword else { return false }
        position += 1
        return true
    }

    private func failure(_ problem: String, at offset: Int? = nil) -> EventGraphError {
        let offset = offset ?? (position < tokens.count ? tokens[position].offset : text.count)
        return EventGraphError(.invalidArgument, "the filter '\(text)' \(problem) at character \(offset)")
    }

    private func describe(_ token: Token) -> String {
        switch token {
        case .word(let word): "'\(word)'"
        case .string(let string): "\"\(string)\""
        case .symbol(let symbol): "'\(symbol)'"
        }
    }

    private static let keywords: Set<String> = ["and", "or", "not"]
    private static let operators: [String: FetchFilter.Comparison] = [
        "==": .equal, "!=": .notEqual, "<": .less, "<=": .lessOrEqual, ">": .greater, ">=": .greaterOrEqual,
        "contains": .contains, "beginswith": .beginsWith, "endswith": .endsWith,
    ]
    private static let operatorList = "== != < <= > >= contains beginsWith endsWith"

    /// Splits the text into words (names, numbers, keywords), quoted strings and symbols, with character offsets.
    private static func tokenize(_ text: String) throws(EventGraphError) -> [(token: Token, offset: Int)] {
        let characters = Array(text)
        var tokens: [(token: Token, offset: Int)] = []
        var index = 0
        func fail(_ problem: String, _ offset: Int) -> EventGraphError {
            EventGraphError(.invalidArgument, "the filter '\(text)' \(problem) at character \(offset)")
        }
        while index < characters.count {
            let start = index
            let character = characters[index]
            if character.isWhitespace {
                index += 1
            } else if character == "\"" {
                var string = ""
                index += 1
                while index < characters.count, characters[index] != "\"" {
                    if characters[index] == "\\" {
                        index += 1
                        guard index < characters.count, characters[index] == "\"" || characters[index] == "\\" else {
                            throw fail("has an unknown escape in a string (use \\\" or \\\\)", index - 1)
                        }
                    }
                    string.append(characters[index])
                    index += 1
                }
                guard index < characters.count else { throw fail("has an unterminated string", start) }
                index += 1
                tokens.append((.string(string), start))
            } else if "()".contains(character) {
                index += 1
                tokens.append((.symbol(String(character)), start))
            } else if "=!<>".contains(character) {
                index += 1
                if index < characters.count, characters[index] == "=" { index += 1 }
                let symbol = String(characters[start..<index])
                guard symbol != "=", symbol != "!" else { throw fail("has '\(symbol)' (use == or !=)", start) }
                tokens.append((.symbol(symbol), start))
            } else {
                while index < characters.count, !characters[index].isWhitespace,
                    !"\"()=!<>".contains(characters[index])
                {
                    index += 1
                }
                tokens.append((.word(String(characters[start..<index])), start))
            }
        }
        return tokens
    }
}
