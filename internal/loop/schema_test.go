package loop

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

const schemaFile = "../../docs/loop.schema.json"

// TestSchemaPublished keeps docs/loop.schema.json equal to what
// `loop-action schema` prints.
func TestSchemaPublished(t *testing.T) {
	t.Parallel()
	got, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(schemaFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatalf("%v (run go test ./loop -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s is stale; run go test ./loop -update (-want +got):\n%s", schemaFile, diff)
	}
}

func compiledSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	b, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaID, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(SchemaID)
	if err != nil {
		t.Fatalf("the schema does not compile: %v", err)
	}
	return s
}

// asJSON decodes TOML into the generic value a JSON validator takes.
func asJSON(t *testing.T, src string) any {
	t.Helper()
	var m map[string]any
	if _, err := toml.Decode(src, &m); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestExamplesConformToSchema(t *testing.T) {
	t.Parallel()
	s := compiledSchema(t)
	for _, f := range exampleConfigs(t) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(asJSON(t, string(src))); err != nil {
			t.Errorf("%s does not conform to the schema: %v", f, err)
		}
	}
}

func TestSchemaRejects(t *testing.T) {
	t.Parallel()
	s := compiledSchema(t)
	tests := map[string]string{
		"unknown top-level key":     "colour = \"blue\"\n" + base,
		"unknown key in a table":    base + "[context]\ncarry = 3\n",
		"unknown key in a check":    base + "  [[goal.check]]\n  type = \"test\"\n  run = \"true\"\n  retries = 2\n",
		"unknown key in a provider": base + "[providers.c]\ncommand = [\"c\"]\nmodel = \"x\"\n",
		"wrong type":                base + "[run]\nconcurrency = \"four\"\n",
		"openai with a command":     base + "[providers.o]\ntype = \"openai\"\nmodel = \"m\"\ncommand = [\"c\"]\n",
		"openai without a model":    base + "[providers.o]\ntype = \"openai\"\n",
		"unknown check type":        base + "  [[goal.check]]\n  type = \"smoke\"\n",
		"regex without pattern":     base + "  [[goal.check]]\n  type = \"regex\"\n  path = \"x\"\n",
		"bad duration":              base + "[metrics]\ntimeout = \"soon\"\n",
		"no goals":                  "name = \"x\"\n",
		"unknown key in deliver":    base + "[deliver]\nbranch = \"main\"\n",
		"deliver partial not bool":  base + "[deliver]\npartial = \"yes\"\n",
	}
	for name, src := range tests {
		if err := s.Validate(asJSON(t, src)); err == nil {
			t.Errorf("%s: the schema accepted it", name)
		}
	}
}
