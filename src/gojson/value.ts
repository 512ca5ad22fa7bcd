/**
 * A value as Go's encoding/json decodes JSON into `interface{}`
 * (and go-yaml → JSON produces): the one declaration.
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object (`map[string]interface{}`). */
export type JsonObject = { [key: string]: JsonValue };
