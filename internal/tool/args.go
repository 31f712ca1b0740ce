package tool

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Args is a parsed argument object.
type Args map[string]any

// String returns the argument as a string. Numbers and booleans are
// formatted; a missing or null value gives "".
func (a Args) String(key string) string {
	switch v := a[key].(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// Has reports whether key is present and not null.
func (a Args) Has(key string) bool { return a[key] != nil }

// Int returns an integer argument. Floats are truncated and numeric strings
// parsed; ok is false when the key is absent or null; err is set when the
// value is present but not a number.
func (a Args) Int(key string) (n int, ok bool, err error) {
	switch v := a[key].(type) {
	case nil:
		return 0, false, nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, true, fmt.Errorf("%s must be an integer (got %v)", key, v)
		}
		return int(v), true, nil
	case string:
		s := strings.TrimSpace(v)
		if i, err := strconv.Atoi(s); err == nil {
			return i, true, nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return int(f), true, nil
		}
		return 0, true, fmt.Errorf("%s must be an integer (got %q)", key, v)
	case bool:
		return 0, true, fmt.Errorf("%s must be an integer (got %v)", key, v)
	default:
		return 0, true, fmt.Errorf("%s must be an integer (got %s)", key, a.String(key))
	}
}

// rescueKeys are tried, in order, when the argument text is not valid JSON
// (behavior.md §1.6 step 2).
var rescueKeys = []string{"command", "code", "content", "page", "path", "pattern", "prompt", "query", "url"}

var rescueRes = func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(rescueKeys))
	for i, k := range rescueKeys {
		out[i] = regexp.MustCompile(`"` + k + `"\s*:\s*("(?:[^"\\]|\\.)*")`)
	}
	return out
}()

// ParseArgs turns the model's raw argument text into an argument object.
//
//   - a JSON object is used as is (empty text or whitespace counts as {}
//     only for tools without required keys, which the tool itself checks —
//     here empty text yields an empty object);
//   - a JSON string maps to the tool's primary key;
//   - any other valid JSON (array, number, bool, null) is an error;
//   - text that is not JSON: first the rescue of known keys from broken
//     JSON, then, if it does not start with '{', the whole raw text maps to
//     the primary key;
//   - otherwise an error that quotes the parse failure.
func ParseArgs(raw, primaryKey string) (Args, error) {
	trimmed := strings.TrimSpace(raw)
	if trimmed == "" {
		return Args{}, nil
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(trimmed))
	err := dec.Decode(&v)
	if err == nil && dec.More() {
		err = fmt.Errorf("unexpected data after the JSON value")
	}
	if err == nil {
		switch t := v.(type) {
		case map[string]any:
			return Args(t), nil
		case string:
			if primaryKey == "" {
				return nil, fmt.Errorf("arguments must be a JSON object, got a JSON string and this tool has no primary key")
			}
			return Args{primaryKey: t}, nil
		default:
			return nil, fmt.Errorf("arguments must be a JSON object, got %s", jsonKind(v))
		}
	}
	for _, re := range rescueRes {
		if m := re.FindStringSubmatch(raw); m != nil {
			var s string
			if json.Unmarshal([]byte(m[1]), &s) == nil {
				key := m[0][1 : strings.Index(m[0][1:], `"`)+1]
				return Args{key: s}, nil
			}
		}
	}
	if !strings.HasPrefix(trimmed, "{") && primaryKey != "" {
		return Args{primaryKey: raw}, nil
	}
	return nil, fmt.Errorf("invalid JSON arguments: %v", err)
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
