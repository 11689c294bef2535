import EventGraph
import EventGraphExamples
import Foundation
import Testing

@Suite("Faulting and external storage")
struct FaultingTests {
    @Test func fetchedObjectsAreFaultsUntilRead() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let context = container.newBackgroundContext()
        for code in ["A", "B", "C"] {
            let course = Course()
            context.insert(course)
            course.code = code
        }
        try context.save()
        let reader = container.newBackgroundContext()
        let courses = try reader.fetch(FetchDescriptor<Course>())
        #expect(courses.count == 3)
        #expect(courses.allSatisfy { $0.isFault })
        _ = courses[0].code
        #expect(!courses[0].isFault)
        #expect(courses[1].isFault)
        // To-many relationships fire lazily: the targets come back as faults.
        let student = Student()
        reader.insert(student)
        student.courses = [courses[1]]
        try reader.save()
        let third = container.newBackgroundContext()
        let fetched = try #require(try third.fetch(FetchDescriptor<Student>()).first)
        let targets = fetched.courses
        #expect(targets.count == 1)
        #expect(targets.allSatisfy { $0.isFault })
        #expect(targets.first?.code == "B")
        try container.close()
    }

    @Test func externalBinaryValuesAreReadOnlyWhenTouchedAndDroppedOnRefresh() throws {
        let directory = TemporaryDirectory()
        let image = Image.filled(width: 64, height: 64, level: 200)
        do {
            let container = try PhotoLocations.open(path: directory.file())
            let context = container.newBackgroundContext()
            PhotoLocations.addEvent(latitude: 48.85, longitude: 2.35, image: image, in: context)
            try context.save()
            try container.close()
        }
        let container = try PhotoLocations.open(path: directory.file())
        let context = container.newBackgroundContext()
        let event = try #require(try PhotoLocations.events(in: context).first)
        #expect(event.thumbnail?.width == 16)
        let photo = try #require(event.photo)
        #expect(photo.isFault)
        #expect(!photo.isExternalValueLoaded(forKey: "image"))
        #expect(photo.image == image)
        #expect(photo.isExternalValueLoaded(forKey: "image"))
        context.refresh(photo)
        #expect(!photo.isExternalValueLoaded(forKey: "image"))
        #expect(photo.image == image)
        try container.close()
    }
}
