import EventGraph
import Foundation
import Testing

/// Each entity belongs to one configuration of the model: a listed one, its super-entity's, or the default.
@Suite("Configurations of a model")
struct StoreConfigurationTests {
    @Test(arguments: [("Member", "Default"), ("Pupil", "Default"), ("Tutor", "Staff"), ("Lecture", "Public")])
    func anEntityBelongsToItsConfiguration(entity: String, configuration: String) throws {
        let model = SeveralStoresModels.campus
        #expect(model.configurationName(of: try #require(model.entity(named: entity))) == configuration)
        #expect(model.configurationNames == ["Default", "Public", "Staff"])
    }

    @Test func aSubEntityTakesItsSuperEntitysConfiguration() throws {
        let model = try ObjectModel(
            types: [Pupil.self, Tutor.self, Lecture.self, Session.self, Handout.self], abstractTypes: [Member.self],
            configurations: ["People": [Member.self]])
        #expect(model.configurationName(of: try #require(model.entity(named: "Tutor"))) == "People")
        #expect(model.configurationNames == ["Default", "People"])
    }

    @Test func anEntityInTwoConfigurationsIsRefused() {
        #expect {
            try ObjectModel(
                types: [Lecture.self, Session.self, Handout.self, Pupil.self, Tutor.self],
                configurations: ["Public": [Lecture.self], "Shared": [Lecture.self]])
        } throws: { error in
            let error = error as! EventGraphError
            return error.code == .invalidModel && error.message.contains("'Lecture' is listed in two configurations")
        }
    }

    @Test func aConfigurationOfAClassOutsideTheModelIsRefused() {
        #expect {
            try ObjectModel(
                types: [Lecture.self, Session.self, Handout.self, Pupil.self, Tutor.self],
                configurations: ["X": [Note.self]])
        } throws: { error in
            (error as! EventGraphError).message.contains("configuration 'X' lists 'Note', which is not an entity")
        }
    }
}
