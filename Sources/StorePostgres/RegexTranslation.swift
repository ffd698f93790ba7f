import Store

/// `$regex` on PostgreSQL: a PCRE2 pattern (already accepted by
/// `RegexFunction`) rewritten for PostgreSQL's ARE engine when it uses only
/// constructs both engines match alike, else refused with 400 naming the
/// construct. Roost's regexes are PCRE2 with UTF and UCP; ARE differs in
/// newlines, Unicode classes and case folding, so the subset is small and
/// each rewrite is exact:
///
/// - literals, `|`, groups `(…)` and `(?:…)`, the quantifiers `* + ? {m} {m,} {m,n}`
///   and their lazy forms, escaped punctuation, `\n \t \r \f \v`;
/// - bracket expressions of literals and ASCII ranges, negated or not;
/// - `.` becomes `[^\n]` (PCRE's dot stops at a newline; ARE's does not),
///   or stays `.` with the `s` option;
/// - `$` becomes `(?=\n?$)` (PCRE's `$` also matches before a final newline);
/// - `^` as it is (both: the start of the subject);
/// - the `i` option when the pattern holds no range and only ASCII; `k` and
///   `s` then become `[kK\u{212A}]` and `[sS\u{17F}]`, the sets PCRE2's
///   Unicode case folding gives them (the Kelvin sign, the long s), which
///   ARE's ASCII folding would not.
///
/// Refused: `\d \w \s \b` and other letter escapes, back-references,
/// lookaround, named and atomic groups, possessive quantifiers, POSIX
/// classes, non-ASCII ranges, and the options `m` and `x`.
enum RegexTranslation {
    static func refuse(_ construct: String) -> QueryError {
        .invalid("$regex: \(construct) is not supported on the PostgreSQL engine (its regular expressions differ from PCRE2 there); see docs/ENGINES.md.")
    }

    static func translate(_ pattern: String, flags: String) throws(QueryError) -> (pattern: String, flags: String) {
        if flags.contains("m") { throw refuse("the option m") }
        if flags.contains("x") { throw refuse("the option x") }
        let dotAll = flags.contains("s")
        let caseless = flags.contains("i")
        let chars = Array(pattern.unicodeScalars)
        var out = ""
        var i = 0
        var canRepeat = false
        var depth = 0
        while i < chars.count {
            let c = chars[i]
            switch c {
            case "\\":
                guard i + 1 < chars.count else { throw refuse("a trailing backslash") }
                out += try escape(chars[i + 1])
                i += 2
                canRepeat = true
                continue
            case ".":
                out += dotAll ? "." : "[^\\n]"
                canRepeat = true
            case "$":
                out += "(?=\\n?$)"
                canRepeat = false
            case "^":
                out += "^"
                canRepeat = false
            case "|":
                out += "|"
                canRepeat = false
            case "(":
                if i + 1 < chars.count && chars[i + 1] == "?" {
                    guard i + 2 < chars.count && chars[i + 2] == ":" else { throw refuse("a (? group other than (?:") }
                    out += "(?:"
                    i += 3
                } else {
                    if i + 1 < chars.count && chars[i + 1] == "*" { throw refuse("a (* verb") }
                    out += "("
                    i += 1
                }
                depth += 1
                canRepeat = false
                continue
            case ")":
                depth -= 1
                out += ")"
                canRepeat = true
            case "*", "+", "?", "{":
                guard canRepeat else { throw refuse("a quantifier after nothing it can repeat") }
                var q = String(c)
                if c == "{" {
                    var j = i + 1
                    while j < chars.count && chars[j] != "}" { j += 1 }
                    guard j < chars.count else { throw refuse("a { that is not a quantifier") }
                    let body = String(String.UnicodeScalarView(chars[(i + 1)..<j]))
                    let parts = body.split(separator: ",", omittingEmptySubsequences: false)
                    guard (1...2).contains(parts.count), let low = Int(parts[0]), low <= 255,
                          parts.count == 1 || parts[1].isEmpty || (Int(parts[1]).map { $0 >= low && $0 <= 255 } ?? false) else {
                        throw refuse("a { that is not a quantifier of at most 255")
                    }
                    q = "{" + body + "}"
                    i = j
                }
                if i + 1 < chars.count && chars[i + 1] == "+" { throw refuse("a possessive quantifier") }
                if i + 1 < chars.count && chars[i + 1] == "?" {
                    q += "?"
                    i += 1
                }
                out += q
                canRepeat = false
            case "[":
                let (bracket, end) = try self.bracket(chars, from: i, caseless: caseless)
                out += bracket
                i = end
                canRepeat = true
                continue
            case "]", "}":
                out += "\\" + String(c)
                canRepeat = true
            default:
                if caseless, let folded = unicodeFold(c) {
                    out += "[" + folded + "]"
                } else {
                    out.unicodeScalars.append(c)
                }
                canRepeat = true
            }
            i += 1
        }
        if caseless {
            if pattern.unicodeScalars.contains(where: { !$0.isASCII }) { throw refuse("the option i with a non-ASCII character") }
            if pattern.contains("-") && pattern.contains("[") { throw refuse("the option i with a character range") }
        }
        _ = depth
        return (out, caseless ? "i" : "")
    }

    /// The members PCRE2's caseless Unicode matching gives an ASCII letter
    /// beyond its two cases, as bracket contents; nil for every other letter.
    static func unicodeFold(_ c: Unicode.Scalar) -> String? {
        switch c {
        case "k", "K": return "kK\u{212A}"
        case "s", "S": return "sS\u{17F}"
        default: return nil
        }
    }

    /// The ARE form of `\c`.
    static func escape(_ c: Unicode.Scalar) throws(QueryError) -> String {
        switch c {
        case "n", "t", "r", "f", "v": return "\\" + String(c)
        default:
            if c.isASCII, c.properties.isAlphabetic || ("0"..."9").contains(c) { throw refuse("the escape \\\(c)") }
            if !c.isASCII { throw refuse("an escaped non-ASCII character") }
            return "\\" + String(c)
        }
    }

    /// A bracket expression from `start` (at `[`): its ARE form and the index past it.
    static func bracket(_ chars: [Unicode.Scalar], from start: Int, caseless: Bool) throws(QueryError) -> (String, Int) {
        var i = start + 1
        var out = "["
        if i < chars.count && chars[i] == "^" {
            out += "^"
            i += 1
        }
        var first = true
        var previousLiteral: Unicode.Scalar?
        while i < chars.count {
            let c = chars[i]
            if c == "]" && !first { return (out + "]", i + 1) }
            first = false
            switch c {
            case "[": throw refuse("a [ inside a character class (POSIX classes)")
            case "\\":
                guard i + 1 < chars.count else { throw refuse("a trailing backslash") }
                let e = chars[i + 1]
                out += try escape(e)
                previousLiteral = ["n", "t", "r", "f", "v"].contains(e) ? nil : e
                i += 2
                continue
            case "-":
                let next = i + 1 < chars.count ? chars[i + 1] : nil
                if let low = previousLiteral, let high = next, high != "]" {
                    guard low.isASCII, high.isASCII, high != "\\", high != "[" else { throw refuse("a range that is not between two ASCII characters") }
                    out += "-" + String(high)
                    previousLiteral = nil
                    i += 2
                    continue
                }
                out += "\\-"
            case "]":
                out += "\\]"
            default:
                if caseless, let folded = unicodeFold(c) { out += folded } else { out.unicodeScalars.append(c) }
            }
            previousLiteral = c == "-" ? nil : c
            i += 1
        }
        throw refuse("an unclosed [")
    }
}
