// Oracle for opcat's src/gojson/structdecode.ts (goUnmarshal, goDecode): json.Unmarshal of JSON
// texts into the Go types opm decodes (operator-registry alpha/declcfg and alpha/property,
// operator-framework/api v1alpha1.ClusterServiceVersion, and transcriptions of the small
// operator-registry pkg/registry types the bundle renderer decodes). Input on stdin: a JSON array
// of {"type": <name>, "text": <JSON text>}. Output: a JSON array of {"error": <text>} or
// {"value": <dump>} ("offset" too for a *json.UnmarshalTypeError: its Offset), where the dump
// shows every field (no omitempty): structs as objects keyed by
// JSON name, nil slices/maps/pointers/RawMessages/[]byte as null, a RawMessage as {"raw": text},
// []byte as base64. Types whose values hold custom types (the CSV, csvSpec) print "ok" only.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	"github.com/operator-framework/operator-registry/pkg/registry"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"

	oracleregistry "oracle/registry"
)

var types = map[string]func() interface{}{
	"property.GVK":                   func() interface{} { return &property.GVK{} },
	"property.Package":               func() interface{} { return &property.Package{} },
	"property.BundleObject":          func() interface{} { return &property.BundleObject{} },
	"[]declcfg.RelatedImage":         func() interface{} { return &[]declcfg.RelatedImage{} },
	"declcfg.Package":                func() interface{} { return &declcfg.Package{} },
	"declcfg.Channel":                func() interface{} { return &declcfg.Channel{} },
	"declcfg.Bundle":                 func() interface{} { return &declcfg.Bundle{} },
	"declcfg.Deprecation":            func() interface{} { return &declcfg.Deprecation{} },
	"registry.PropertiesFile":        func() interface{} { return &oracleregistry.PropertiesFile{} },
	"registry.AnnotationsFile":       func() interface{} { return &oracleregistry.AnnotationsFile{} },
	"registry.csvSpec":               func() interface{} { return &oracleregistry.CsvSpec{} },
	"v1alpha1.ClusterServiceVersion": func() interface{} { return &v1alpha1.ClusterServiceVersion{} },
}

var okOnly = map[string]bool{"registry.csvSpec": true, "v1alpha1.ClusterServiceVersion": true}

// crds: decoded as opm's Bundle.cache does: the unstructured object marshalled (sorted keys), then
// registry.Codecs.UniversalDeserializer into the typed CRD. The dump is the fields opm reads.
var crds = map[string]bool{"crd.v1": true, "crd.v1beta1": true}

func decodeCRD(typ, text string) (interface{}, error) {
	var obj map[string]interface{}
	if err := json.Unmarshal([]byte(text), &obj); err != nil {
		return nil, err
	}
	cb, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	dec := registry.Codecs.UniversalDeserializer()
	type version struct {
		Name string `json:"name"`
	}
	type spec struct {
		Group    string            `json:"group"`
		Names    map[string]string `json:"names"`
		Version  string            `json:"version,omitempty"`
		Versions []version         `json:"versions"`
	}
	var out spec
	if typ == "crd.v1" {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if _, _, err := dec.Decode(cb, nil, crd); err != nil {
			return nil, fmt.Errorf("error decoding v1 CRD: %v", err)
		}
		out = spec{Group: crd.Spec.Group, Names: map[string]string{"plural": crd.Spec.Names.Plural, "kind": crd.Spec.Names.Kind}}
		for _, v := range crd.Spec.Versions {
			out.Versions = append(out.Versions, version{v.Name})
		}
	} else {
		crd := &apiextensionsv1beta1.CustomResourceDefinition{}
		if _, _, err := dec.Decode(cb, nil, crd); err != nil {
			return nil, fmt.Errorf("error decoding v1beta1 CRD: %v", err)
		}
		out = spec{Group: crd.Spec.Group, Version: crd.Spec.Version, Names: map[string]string{"plural": crd.Spec.Names.Plural, "kind": crd.Spec.Names.Kind}}
		for _, v := range crd.Spec.Versions {
			out.Versions = append(out.Versions, version{v.Name})
		}
	}
	return out, nil
}

var rawType = reflect.TypeOf(json.RawMessage{})

func dump(v reflect.Value) interface{} {
	switch v.Kind() {
	case reflect.Ptr:
		if v.IsNil() {
			return nil
		}
		return dump(v.Elem())
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		if v.Type() == rawType {
			return map[string]interface{}{"raw": string(v.Bytes())}
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Bytes() // json.Marshal writes base64
		}
		out := make([]interface{}, v.Len())
		for i := range out {
			out[i] = dump(v.Index(i))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := map[string]interface{}{}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		for _, k := range keys {
			out[k.String()] = dump(v.MapIndex(k))
		}
		return out
	case reflect.Struct:
		out := map[string]interface{}{}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name := f.Name
			if tag := f.Tag.Get("json"); tag != "" {
				if tag == "-" {
					continue
				}
				for j := 0; j < len(tag); j++ {
					if tag[j] == ',' {
						tag = tag[:j]
						break
					}
				}
				if tag != "" {
					name = tag
				}
			}
			out[name] = dump(v.Field(i))
		}
		return out
	}
	panic("unsupported kind " + v.Kind().String())
}

type input struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func main() {
	var inputs []input
	if err := json.NewDecoder(os.Stdin).Decode(&inputs); err != nil {
		panic(err)
	}
	out := make([]map[string]interface{}, len(inputs))
	for i, in := range inputs {
		if crds[in.Type] {
			if v, err := decodeCRD(in.Type, in.Text); err != nil {
				out[i] = map[string]interface{}{"error": err.Error()}
			} else {
				out[i] = map[string]interface{}{"value": v}
			}
			continue
		}
		mk, ok := types[in.Type]
		if !ok {
			panic("unknown type " + in.Type)
		}
		v := mk()
		if err := json.Unmarshal([]byte(in.Text), v); err != nil {
			out[i] = map[string]interface{}{"error": err.Error()}
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) {
				out[i]["offset"] = ute.Offset
			}
		} else if okOnly[in.Type] {
			out[i] = map[string]interface{}{"value": "ok"}
		} else {
			out[i] = map[string]interface{}{"value": dump(reflect.ValueOf(v))}
		}
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
