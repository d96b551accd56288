//! Tool schemas in the vocabulary every JSON Schema validator knows.
//! schemars marks Rust's unsigned integers with `format: uint32` and the
//! like; JSON Schema allows unknown formats, but Ajv-based clients (the
//! TypeScript SDK, the Inspector) warn about each one on every `tools/list`.
//! An unsigned integer is `integer` with `minimum: 0`.

use serde_json::{Map, Value};

/// Rewrites non-standard integer formats in `schema`, everywhere in it.
pub(crate) fn standard_integers(schema: &mut Map<String, Value>) {
    fix(schema);
    let mut stack: Vec<&mut Value> = schema.values_mut().collect();
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(o) => {
                fix(o);
                stack.extend(o.values_mut());
            }
            Value::Array(a) => stack.extend(a.iter_mut()),
            _ => {}
        }
    }
}

fn fix(o: &mut Map<String, Value>) {
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
                "topK": {"type": ["integer", "null"], "format": "uint32", "minimum": 1},
                "n": {"type": "integer", "format": "uint64"},
                "x": {"anyOf": [{"type": "integer", "format": "int16"}, {"format": "date-time"}]}
            }
        });
        standard_integers(s.as_object_mut().unwrap());
        assert_eq!(
            s,
            serde_json::json!({
                "type": "object",
                "minimum": 0,
                "properties": {
                    "topK": {"type": ["integer", "null"], "minimum": 1},
                    "n": {"type": "integer", "minimum": 0},
                    "x": {"anyOf": [{"type": "integer"}, {"format": "date-time"}]}
                }
            })
        );
    }
}
