public import EventGraph
public import Foundation

/// The operations of the PhotoLocations app.
public enum PhotoLocations {
    /// The model, version 2 (the seed's new model: the photo in its own entity).
    public static let model: ObjectModel = {
        do {
            return try ObjectModel(name: "Locations", version: "2", types: [Event.self, Photo.self])
        } catch {
            fatalError("the PhotoLocations model is invalid: \(error)")
        }
    }()

    /// Opens (or creates) a PhotoLocations store.
    public static func open(path: String) throws(EventGraphError) -> ModelContainer {
        try ModelContainer(path: path, model: model)
    }

    /// Adds an event with a photo; the event keeps a thumbnail, the photo the full image.
    @discardableResult
    public static func addEvent(
        latitude: Double, longitude: Double, image: Image?, at date: Date = Date(), in context: ObjectContext
    ) -> Event {
        let event = Event()
        context.insert(event)
        event.timeStamp = date
        event.latitude = latitude
        event.longitude = longitude
        if let image { setImage(image, of: event, in: context) }
        return event
    }

    /// Chooses (or replaces) the photo of an event.
    public static func setImage(_ image: Image, of event: Event, in context: ObjectContext) {
        event.thumbnail = image.scaled(by: max(1, image.width / 16))
        if let photo = event.photo {
            photo.image = image
        } else {
            let photo = Photo()
            context.insert(photo)
            photo.image = image
            event.photo = photo
        }
    }

    /// Removes the photo of an event.
    public static func deleteImage(of event: Event, in context: ObjectContext) {
        if let photo = event.photo { context.delete(photo) }
        event.thumbnail = nil
    }

    /// The events, newest first (the root view's list).
    public static func events(in context: ObjectContext) throws(EventGraphError) -> [Event] {
        try context.fetch(FetchDescriptor<Event>(sortBy: [SortDescriptor(\.timeStamp, order: .reverse)]))
    }
}
