//! Tool schemas every client accepts. schemars writes two things some
//! reject:
//! - Rust's unsigned integers as `format: uint32` and the like: JSON Schema
//!   allows unknown formats, but Ajv-based clients (the TypeScript SDK, the
//!   Inspector) warn about each one. An unsigned integer is `integer` with
//!   `minimum: 0`.
//! - An `Option` as `"type": ["string", "null"]`: Gemini-style clients
//!   refuse type arrays. One rule for nullable fields: an argument that may
//!   be left out is simply not `required` (its type loses `null`); an
//!   answer's field that may be `null` says so with `anyOf`.

use serde_json::{Map, Value};

/// Which side of a tool a schema describes.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Side {
    Input,
    Output,
}

/// Rewrites `schema`, everywhere in it, into the portable vocabulary.
pub(crate) fn portable(schema: &mut Map<String, Value>, side: Side) {
    fix(schema, side);
    let mut stack: Vec<&mut Value> = schema.values_mut().collect();
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(o) => {
                fix(o, side);
                stack.extend(o.values_mut());
            }
            Value::Array(a) => stack.extend(a.iter_mut()),
            _ => {}
        }
    }
}

fn fix(o: &mut Map<String, Value>, side: Side) {
    standard_integer(o);
    if let Some(Value::Array(types)) = o.get("type") {
        let named: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        let nullable = named.len() < types.len();
        let single = match named.as_slice() {
            [one] => one.clone(),
            _ => return, // a union of several types: left as written
        };
        o.insert("type".into(), single);
        if nullable && side == Side::Output {
            // The words stay with the field; the type goes into the choice.
            let mut inner = std::mem::take(o);
            for key in ["title", "description"] {
                if let Some(v) = inner.remove(key) {
                    o.insert(key.into(), v);
                }
            }
            let null = serde_json::json!({"type": "null"});
            o.insert(
                "anyOf".into(),
                Value::Array(vec![Value::Object(inner), null]),
            );
        }
    }
}

fn standard_integer(o: &mut Map<String, Value>) {
    let Some(format) = o.get("format").and_then(Value::as_str) else {
        return;
    };
    let unsigned = format.starts_with("uint");
    if unsigned || matches!(format, "int8" | "int16") {
        o.remove("format");
        if unsigned && !o.contains_key("minimum") {
            o.insert("minimum".into(), 0.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsigned_formats_become_a_minimum() {
        let mut s = serde_json::json!({
            "type": "object",
            "format": "uint",
            "properties": {
                "topK": {"type": "integer", "format": "uint32", "minimum": 1},
                "n": {"type": "integer", "format": "uint64"},
                "x": {"anyOf": [{"type": "integer", "format": "int16"}, {"format": "date-time"}]}
            }
        });
        portable(s.as_object_mut().unwrap(), Side::Input);
        assert_eq!(
            s,
            serde_json::json!({
                "type": "object",
                "minimum": 0,
                "properties": {
                    "topK": {"type": "integer", "minimum": 1},
                    "n": {"type": "integer", "minimum": 0},
                    "x": {"anyOf": [{"type": "integer"}, {"format": "date-time"}]}
                }
            })
        );
    }

    #[test]
    fn nullable_fields_lose_their_type_arrays() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "topK": {"type": ["integer", "null"], "format": "uint32", "minimum": 1},
                "note": {"description": "Why.", "type": ["string", "null"]}
            }
        });
        let mut input = schema.clone();
        portable(input.as_object_mut().unwrap(), Side::Input);
        assert_eq!(
            input["properties"]["topK"],
            serde_json::json!({"type": "integer", "minimum": 1})
        );
        assert_eq!(
            input["properties"]["note"],
            serde_json::json!({"description": "Why.", "type": "string"})
        );
        let mut output = schema;
        portable(output.as_object_mut().unwrap(), Side::Output);
        assert_eq!(
            output["properties"]["note"],
            serde_json::json!({"description": "Why.", "anyOf": [{"type": "string"}, {"type": "null"}]})
        );
    }
}
