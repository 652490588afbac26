package object

import (
	"bufio"
	"bytes"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/go-json-experiment/json"
	"k8s.io/apimachinery/pkg/api/equality"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// repositoryObjects returns the JSON of every object of a kind Decode types
// in the repository's YAML files (examples, fixtures, test data), with the
// kind's key in kinds.
func repositoryObjects(t testing.TB) (keys []string, docs [][]byte) {
	t.Helper()
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == ".git" || d.Name() == "fuzz") {
			if err == nil {
				err = filepath.SkipDir
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".yaml") && !strings.HasSuffix(path, ".yml") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		r := utilyaml.NewYAMLReader(bufioReader(data))
		for {
			doc, err := r.Read()
			if err != nil {
				return nil // a file the splitter cannot read is no case here
			}
			data, err := yaml.YAMLToJSON(doc)
			if err != nil {
				continue
			}
			var h header
			if kjson.UnmarshalCaseSensitivePreserveInts(data, &h) != nil {
				continue
			}
			ref := Ref{APIVersion: h.APIVersion, Kind: h.Kind}
			if key := ref.Group() + "/" + ref.Kind; kinds[key] != nil {
				keys, docs = append(keys, key), append(docs, data)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys, docs
}

// sameDecoding decodes data into a new value of kind key with unmarshal and
// with the encoding/json that sigs.k8s.io/json wraps, which the API server
// uses, and says how they differ: "" when both fail, or both give
// semantically equal objects. unmarshal runs with Decode's options and,
// unless data may hold a quantity of an ExtremeExponent, DecodeChecked's.
func sameDecoding(key string, data []byte) string {
	want := kinds[key]()
	errWant := kjson.UnmarshalCaseSensitivePreserveInts(data, want)
	options := map[string]json.Options{"Decode": decodeOptions, "DecodeChecked": checkedOptions}
	if extremeExponent.Match(data) {
		delete(options, "DecodeChecked")
	}
	for name, opts := range options {
		got := kinds[key]()
		errGot := unmarshal(data, got, opts)
		switch {
		case errGot != nil && errWant != nil:
		case errGot != nil || errWant != nil:
			return name + ": unmarshal: " + errString(errGot) + "; encoding/json: " + errString(errWant)
		case !equality.Semantic.DeepEqual(want, got):
			return name + ": decoded objects differ"
		}
	}
	return ""
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// TestDecodeAsEncodingJSON: unmarshal decodes every typed object of the
// repository's YAML as encoding/json does.
func TestDecodeAsEncodingJSON(t *testing.T) {
	keys, docs := repositoryObjects(t)
	if len(docs) < 100 {
		t.Fatalf("%d typed objects in the repository's YAML, want at least 100", len(docs))
	}
	for i, data := range docs {
		if diff := sameDecoding(keys[i], data); diff != "" {
			t.Errorf("%s %s: %s", keys[i], data, diff)
		}
	}
}

// FuzzDecodeAsEncodingJSON holds unmarshal to encoding/json's decoding for
// any JSON, as each kind Decode types.
func FuzzDecodeAsEncodingJSON(f *testing.F) {
	names := slices.Sorted(maps.Keys(kinds))
	keys, docs := repositoryObjects(f)
	for i, data := range docs {
		f.Add(uint8(slices.Index(names, keys[i])), data)
	}
	f.Add(uint8(0), []byte(`{"spec":{"replicas":"3","x":1,"x":2},"metadata":{"labels":{"a":1}}}`))
	for _, seed := range []struct{ key, data string }{
		{"apps/Deployment", `{"spec":{"replicas":3},"spec":null}`},
		{"apps/Deployment", `{"spec":{"template":{"spec":{"containers":[{"name":"a"}]}}},"spec":{"template":{"spec":{"containers":[{"image":"b"}]}}}}`},
		{"/ConfigMap", `{"binaryData":{"k":"AAAA\nBBBB\n"}}`},
		{"/ConfigMap", `{"binaryData":{"k":[1,2]}}`},
		{"/Pod", `{"spec":{"containers":[{"resources":{"requests":{"cpu":"1E-100","memory":1e3}}}]}}`},
	} {
		f.Add(uint8(slices.Index(names, seed.key)), []byte(seed.data))
	}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		if extremeExponent.Match(data) {
			return // unmarshal refuses the quantities resource.ParseQuantity would take minutes to read
		}
		key := names[int(kind)%len(names)]
		if diff := sameDecoding(key, data); diff != "" {
			t.Errorf("%s %s: %s", key, data, diff)
		}
	})
}

// extremeExponent finds what may be a quantity of an ExtremeExponent
// anywhere in a JSON text (TestExtremeExponent holds ExtremeExponent itself).
var extremeExponent = regexp.MustCompile(`[eE][-+]?0*[0-9]{4}`)

func TestExtremeExponent(t *testing.T) {
	for s, want := range map[string]bool{
		"1E-777777771": true, "E777777771": true, "1e+0001000": true, "2e1000": true,
		"1E": false, "2E": false, "1Ei": false, "1e3": false, "5E6": false, "1e0003": false, "1E-999": false, "500m": false, "1E-99x9999": false,
	} {
		if got := ExtremeExponent(s); got != want {
			t.Errorf("ExtremeExponent(%q) = %v, want %v", s, got, want)
		}
	}
}

func bufioReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }

// TestQuantityEscape: the e of an escape (\u001e) is no exponent, and
// ParseQuantity refuses a backslash at once: Decode and DecodeChecked refuse
// such a quantity alike.
func TestQuantityEscape(t *testing.T) {
	data := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"\u001e7777"}}}]}}`)
	_, err := Decode("v1", "Pod", data, Source{}, nil)
	_, errChecked := DecodeChecked("v1", "Pod", data, Source{}, nil)
	if err == nil || errChecked == nil || err.Error() != errChecked.Error() || strings.Contains(err.Error(), "exponent") {
		t.Errorf("Decode: %v; DecodeChecked: %v; want the same error, not about an exponent", err, errChecked)
	}
}

// TestDecodeKeepsNoInput: the object Decode returns keeps none of the bytes
// of data, apiVersion and kind (the manifest loader reuses the buffers they
// are in): overwritten once decoded, the object is that of a copy left
// alone.
func TestDecodeKeepsNoInput(t *testing.T) {
	for _, doc := range []struct{ apiVersion, kind, json string }{
		{"apps/v1", "Deployment", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":{"app":"a"}},"spec":{"template":{"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"x:1","resources":{"requests":{"cpu":"250m"}}}]}}}}`},
		{"extensions/v1beta1", "Ingress", `{"apiVersion":"extensions/v1beta1","kind":"Ingress","metadata":{"name":"i"},"spec":{"backend":{"serviceName":"s","servicePort":80}}}`},
		{"example.com/v1", "Widget", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"n"}}`},
		{"", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}}`},
	} {
		// apiVersion, kind and data in one buffer, as the loader's strings
		// are in the file it read.
		buf := []byte(doc.apiVersion + doc.kind + doc.json)
		apiVersion := unsafe.String(unsafe.SliceData(buf), len(doc.apiVersion))
		kind := unsafe.String(unsafe.SliceData(buf[len(doc.apiVersion):]), len(doc.kind))
		got, err := Decode(apiVersion, kind, buf[len(doc.apiVersion)+len(doc.kind):], Source{File: "f.yaml", Line: 1}, nil)
		if err != nil {
			t.Fatalf("%s: %v", doc.json, err)
		}
		for i := range buf {
			buf[i] = 'x'
		}
		want, err := Decode(doc.apiVersion, doc.kind, []byte(doc.json), Source{File: "f.yaml", Line: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("the object changed with the bytes it was decoded from:\n%s", doc.json)
		}
	}
}
