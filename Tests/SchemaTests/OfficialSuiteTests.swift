import Foundation
import JSON
import Schema
import Testing

/// The official JSON-Schema-Test-Suite (draft 2020-12) for every keyword Roost
/// claims: every case of every file in `files` passes, or is in `skipped` with a reason.
///
/// Files of the suite not run at all, and why:
/// - dynamicRef.json, optional/dynamicRef.json: `$dynamicRef`/`$dynamicAnchor` are refused.
/// - unevaluatedItems.json, unevaluatedProperties.json: refused.
/// - refRemote.json, defs.json, vocabulary.json, optional/cross-draft.json: remote `$ref`s
///   (to localhost:1234 or the meta-schemas), which Roost refuses.
/// - optional/format/* except the six formats Roost asserts: those formats are accepted unchecked.
/// - optional/bignum.json: integers beyond 64 bits are parsed as doubles.
/// - optional/dependencies-compatibility.json: `dependencies` is refused (older drafts).
/// - optional/format-assertion.json, optional/no-schema.json, optional/id.json,
///   optional/anchor.json, optional/refOfUnknownKeyword.json, optional/unknownKeyword.json:
///   custom meta-schemas, remote refs, or unknown keywords, which Roost refuses.
@Suite struct OfficialSuiteTests {
    static let suite = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Suite")

    static let files: [String] = [
        "additionalProperties", "allOf", "anchor", "anyOf", "boolean_schema", "const", "contains", "content",
        "default", "dependentRequired", "dependentSchemas", "enum", "exclusiveMaximum", "exclusiveMinimum",
        "format", "if-then-else", "infinite-loop-detection", "items", "maxContains", "maxItems", "maxLength",
        "maxProperties", "maximum", "minContains", "minItems", "minLength", "minProperties", "minimum",
        "multipleOf", "not", "oneOf", "pattern", "patternProperties", "prefixItems", "properties",
        "propertyNames", "ref", "required", "type", "uniqueItems",
        "optional/format/date-time", "optional/format/date", "optional/format/time",
        "optional/format/email", "optional/format/uri", "optional/format/uuid",
        "optional/ecmascript-regex", "optional/non-bmp-regex", "optional/float-overflow",
    ]

    /// "file|group" or "file|group|case" → why it is not run.
    static let skipped: [String: String] = [
        "format|email format|invalid email string is only an annotation by default":
            "Roost asserts this format (the brief's choice); the suite's default treats format as an annotation",
        "format|date format|invalid date string is only an annotation by default":
            "Roost asserts this format (the brief's choice); the suite's default treats format as an annotation",
        "format|date-time format|invalid date-time string is only an annotation by default":
            "Roost asserts this format (the brief's choice); the suite's default treats format as an annotation",
        "format|time format|invalid time string is only an annotation by default":
            "Roost asserts this format (the brief's choice); the suite's default treats format as an annotation",
        "format|uri format|invalid uri string is only an annotation by default":
            "Roost asserts this format (the brief's choice); the suite's default treats format as an annotation",
        "format|uuid format|invalid uuid string is only an annotation by default":
            "Roost asserts this format (the brief's choice); the suite's default treats format as an annotation",
        "not|collect annotations inside a 'not', even if collection is disabled":
            "uses unevaluatedProperties, which Roost refuses",
        "ref|ref creates new scope when adjacent to keywords":
            "uses unevaluatedProperties, which Roost refuses",
        "ref|remote ref, containing refs itself":
            "a $ref to the remote meta-schema, which Roost refuses",
        "optional/float-overflow|all integers are multiples of 0.5, if overflow is handled":
            "1e308 / 0.5 overflows a Double; Roost reports it as not a multiple",
        "optional/ecmascript-regex|ECMA 262 \\s matches whitespace|latin-1 non-breaking-space matches":
            "\\s is ASCII whitespace only (PCRE2 without UCP, so that \\d and \\w stay ASCII as in ECMA-262)",
        "optional/ecmascript-regex|ECMA 262 \\s matches whitespace|zero-width whitespace matches":
            "\\s is ASCII whitespace only (PCRE2 without UCP, so that \\d and \\w stay ASCII as in ECMA-262)",
        "optional/ecmascript-regex|ECMA 262 \\s matches whitespace|paragraph separator matches (line terminator)":
            "\\s is ASCII whitespace only (PCRE2 without UCP, so that \\d and \\w stay ASCII as in ECMA-262)",
        "optional/ecmascript-regex|ECMA 262 \\s matches whitespace|EM SPACE matches (Space_Separator)":
            "\\s is ASCII whitespace only (PCRE2 without UCP, so that \\d and \\w stay ASCII as in ECMA-262)",
        "optional/ecmascript-regex|ECMA 262 \\S matches everything but whitespace|latin-1 non-breaking-space does not match":
            "\\s is ASCII whitespace only (PCRE2 without UCP, so that \\d and \\w stay ASCII as in ECMA-262)",
        "optional/ecmascript-regex|ECMA 262 \\S matches everything but whitespace|zero-width whitespace does not match":
            "\\s is ASCII whitespace only (PCRE2 without UCP, so that \\d and \\w stay ASCII as in ECMA-262)",
        "optional/ecmascript-regex|ECMA 262 \\S matches everything but whitespace|paragraph separator does not match (line terminator)":
            "\\s is ASCII whitespace only (PCRE2 without UCP, so that \\d and \\w stay ASCII as in ECMA-262)",
        "optional/ecmascript-regex|ECMA 262 \\S matches everything but whitespace|EM SPACE does not match (Space_Separator)":
            "\\s is ASCII whitespace only (PCRE2 without UCP, so that \\d and \\w stay ASCII as in ECMA-262)",
    ]

    struct Outcome { var passed = 0; var skipped = 0; var failures: [String] = [] }

    @Test(arguments: files)
    func suiteFile(_ file: String) throws {
        let data = try Data(contentsOf: Self.suite.appendingPathComponent(file + ".json"))
        let groups = try #require(try JSONParser.parse(Array(data)).arrayValue)
        var outcome = Outcome()
        var usedSkips = Set<String>()
        for group in groups {
            let object = try #require(group.objectValue)
            let name = object["description"]?.stringValue ?? "?"
            let groupKey = "\(file)|\(name)"
            let cases = object["tests"]?.arrayValue ?? []
            if Self.skipped[groupKey] != nil {
                usedSkips.insert(groupKey)
                outcome.skipped += cases.count
                continue
            }
            let schema: JSONSchema
            do {
                schema = try JSONSchema(object["schema"]!)
            } catch {
                outcome.failures.append("\(groupKey): schema refused: \(error)")
                continue
            }
            for c in cases {
                let test = try #require(c.objectValue)
                let caseKey = "\(groupKey)|\(test["description"]?.stringValue ?? "?")"
                if Self.skipped[caseKey] != nil {
                    usedSkips.insert(caseKey)
                    outcome.skipped += 1
                    continue
                }
                let expected = test["valid"] == .bool(true)
                let violations = schema.validate(test["data"]!)
                if violations.isEmpty != expected || schema.isValid(test["data"]!) != expected {
                    outcome.failures.append("\(caseKey): expected \(expected ? "valid" : "invalid"), got \(violations)")
                } else {
                    outcome.passed += 1
                }
            }
        }
        for failure in outcome.failures { print("FAIL " + failure) }
        #expect(outcome.failures.isEmpty, "\(outcome.failures.count) cases of \(file) failed")
        let stale = Self.skipped.keys.filter { $0.hasPrefix(file + "|") && !usedSkips.contains($0) }
        #expect(stale.isEmpty, "skips that match no case: \(stale)")
        print("suite \(file): \(outcome.passed) passed, \(outcome.skipped) skipped, \(outcome.failures.count) failed")
    }
}
