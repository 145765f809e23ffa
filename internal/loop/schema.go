package loop

import (
	"encoding/json"

	"github.com/invopop/jsonschema"
	orderedmap "github.com/pb33f/ordered-map/v2"
)

// SchemaID is where the published schema lives.
const SchemaID = "https://raw.githubusercontent.com/loop-action/loop-action/main/docs/loop.schema.json"

// Schema returns the JSON Schema (draft 2020-12) of a loop config,
// generated from the config types. Unknown keys are rejected at every level.
func Schema() ([]byte, error) {
	r := &jsonschema.Reflector{
		FieldNameTag:               "toml",
		RequiredFromJSONSchemaTags: true,
		DoNotReference:             false,
		ExpandedStruct:             true,
	}
	s := r.Reflect(&Config{})
	s.ID = SchemaID
	s.Title = "loop-action loop config"
	s.Description = "A loop config for loop-action (TOML). Reference: docs/config.md."
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// JSONSchemaExtend adds, for each check type, the keys it requires.
func (Check) JSONSchemaExtend(s *jsonschema.Schema) {
	need := func(typ string, keys ...string) *jsonschema.Schema {
		return &jsonschema.Schema{
			If:   &jsonschema.Schema{Properties: props("type", &jsonschema.Schema{Const: typ})},
			Then: &jsonschema.Schema{Required: keys},
		}
	}
	s.AllOf = []*jsonschema.Schema{
		need(CheckFileExists, "path"),
		need(CheckRegex, "path", "pattern"),
		need(CheckMetric, "name", "op", "value"),
		need(CheckJudge, "node"),
	}
}

func props(kv ...any) *orderedmap.OrderedMap[string, *jsonschema.Schema] {
	p := jsonschema.NewProperties()
	for i := 0; i+1 < len(kv); i += 2 {
		p.Set(kv[i].(string), kv[i+1].(*jsonschema.Schema))
	}
	return p
}
