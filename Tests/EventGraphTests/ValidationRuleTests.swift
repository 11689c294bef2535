import Foundation
import LogFormat
import Testing

@testable import EventGraph

final class Badge: ManagedObject {
    @Attribute(.pattern("[a-z]+")) var slug: String = "badge"
    @Attribute(.range(1...5)) var level: Int16 = 1
    @Attribute(.length(2...4)) var code: String = "ab"
    @Attribute var note: String? = nil
}

/// Save-time validation reads a compact rule per property (``ValidationRule``) instead of copying each property's
/// description for every object: every rule still fails with the same property and message.
@Suite("Validation rules at save")
struct ValidationRuleTests {
    static let model = try! ObjectModel(name: "Badges", version: "1", types: [Badge.self])

    @Test func everyRuleFailsWithItsPropertyAndMessage() throws {
        let container = try ModelContainer(inMemoryWith: Self.model)
        let context = container.newBackgroundContext(name: "writer")
        let badge = Badge()
        context.insert(badge)
        badge.slug = "Not Lower"
        badge.level = 9
        badge.code = "toolong"
        let error = try #require(throws: EventGraphError.self) { try context.save() }
        #expect(error.code == .validation)
        let failures = error.failures.map { "\($0.propertyName ?? "-"): \($0.message)" }
        #expect(
            failures == [
                "slug: 'Not Lower' does not match the pattern [a-z]+",
                "level: is 9, above the maximum 5.0",
                "code: has length 7, longer than the maximum 4",
            ])
        badge.slug = "ok"
        badge.level = 3
        badge.code = "abc"
        try context.save()
    }

    @Test func eachRuleCarriesItsAttributesValueRules() throws {
        // The rule holds the bounds and the pattern, so that checking a value copies no description.
        let entity = try #require(Self.model.entity(named: "Badge"))
        for rule in entity.validationRules {
            let attribute = try #require(entity.properties[rule.index].attribute)
            #expect(rule.minimumValue == attribute.minimumValue && rule.maximumValue == attribute.maximumValue)
            #expect(rule.minimumLength == attribute.minimumLength && rule.maximumLength == attribute.maximumLength)
            #expect(rule.hasPattern == (attribute.pattern != nil))
        }
        let container = try ModelContainer(inMemoryWith: Self.model)
        let context = container.newBackgroundContext(name: "writer")
        let badge = Badge()
        context.insert(badge)
        badge.level = 0
        badge.code = "a"
        let error = try #require(throws: EventGraphError.self) { try context.save() }
        #expect(
            error.failures.map { "\($0.propertyName ?? "-"): \($0.message)" } == [
                "level: is 0, below the minimum 1.0", "code: has length 1, shorter than the minimum 2",
            ])
    }

    @Test("a length counts characters: a bound is decided without counting only where the bytes prove it")
    func aLengthCountsCharactersNotBytes() throws {
        // Each value's UTF-8 bytes and its characters fall on different sides of a bound, so a check that took the
        // bytes for the length, or skipped counting where the bytes prove nothing, gives another answer.
        let cases: [(code: String, failure: String?)] = [
            ("é", "code: has length 1, shorter than the minimum 2"),  // 2 bytes, 1 character
            ("e\u{301}\u{301}", "code: has length 1, shorter than the minimum 2"),  // 5 bytes, 1 character
            ("👍🏽👍🏽", nil),  // 16 bytes, 2 characters
            ("éé", nil),  // 4 bytes, 2 characters
            ("ééééé", "code: has length 5, longer than the maximum 4"),  // 10 bytes
            ("a", "code: has length 1, shorter than the minimum 2"),
            ("abcd", nil),
            ("", "code: has length 0, shorter than the minimum 2"),
        ]
        for (code, expected) in cases {
            let container = try ModelContainer(inMemoryWith: Self.model)
            let context = container.newBackgroundContext(name: "writer")
            let badge = Badge()
            context.insert(badge)
            badge.code = code
            if let expected {
                let error = try #require(throws: EventGraphError.self, "\(code)") { try context.save() }
                #expect(error.failures.map { "\($0.propertyName ?? "-"): \($0.message)" } == [expected], "\(code)")
            } else {
                #expect(throws: Never.self, "\(code)") { try context.save() }
            }
        }
        // The shortcut itself: sure only where the bytes bound the count.
        #expect(AttributeValue.string("abc").lengthIsSurelyWithin(minimum: 1, maximum: nil))
        #expect(AttributeValue.string("abc").lengthIsSurelyWithin(minimum: nil, maximum: 3))
        #expect(!AttributeValue.string("abc").lengthIsSurelyWithin(minimum: 2, maximum: nil))
        #expect(!AttributeValue.string("éé").lengthIsSurelyWithin(minimum: nil, maximum: 3))
        #expect(!AttributeValue.string("").lengthIsSurelyWithin(minimum: 1, maximum: nil))
        #expect(AttributeValue.string("").lengthIsSurelyWithin(minimum: 0, maximum: 0))
        #expect(!AttributeValue.binary([1, 2]).lengthIsSurelyWithin(minimum: nil, maximum: nil))
    }

    @Test("a rule holds no reference, so the save's copy of it per object retains and releases nothing")
    func aRuleIsBitwiseCopyable() {
        #expect(_isPOD(ValidationRule.self))
    }

    @Test func onlyPropertiesWithARuleAreChecked() throws {
        let entity = try #require(Self.model.entity(named: "Badge"))
        #expect(entity.validationRules.map { entity.properties[$0.index].name } == ["slug", "level", "code"])
        let school = try #require(TestModels.school.entity(named: "Lesson"))
        // A relationship is always checked (required, counts); the title has a length.
        #expect(Set(school.validationRules.map { school.properties[$0.index].name }) == ["title", "course"])
    }

    @Test func aRelationshipRuleNothingBreaksReadsNoValue() throws {
        // Lesson.course is an optional to-one: its rule cannot fail, so validation does not read (copy) its value;
        // the title's length rule reads the title.
        let lesson = try #require(TestModels.school.entity(named: "Lesson"))
        var patterns = CompiledPatterns()
        var read: [String] = []
        let failures = lesson.ruleFailures(patterns: &patterns) { index in
            read.append(lesson.properties[index].name)
            return nil
        }
        #expect(failures.isEmpty)
        #expect(read == ["title"])
    }
}
