// The log's value types (AttributeValue, AttributeType, DeleteRule, SchemaPayload, Durability, …) are part of
// EventGraph's public API, so importing EventGraph makes them available without a second import.
@_exported public import LogFormat
