// Oracle for opcat's migrate.ts: for each CSV JSON text (a JSON array of strings on stdin),
// prints the olm.csv.metadata value operator-registry builds (json.Unmarshal into
// v1alpha1.ClusterServiceVersion, then property.MustBuildCSVMetadata), or the error text.
package main

import (
	"bytes"
	"encoding/json"
	"os"

	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Transcription of operator-registry alpha/property.CSVMetadata.
type CSVMetadata struct {
	Annotations               map[string]string                  `json:"annotations,omitempty"`
	APIServiceDefinitions     v1alpha1.APIServiceDefinitions     `json:"apiServiceDefinitions,omitempty"`
	CustomResourceDefinitions v1alpha1.CustomResourceDefinitions `json:"crdDescriptions,omitempty"`
	Description               string                             `json:"description,omitempty"`
	DisplayName               string                             `json:"displayName,omitempty"`
	InstallModes              []v1alpha1.InstallMode             `json:"installModes,omitempty"`
	Keywords                  []string                           `json:"keywords,omitempty"`
	Labels                    map[string]string                  `json:"labels,omitempty"`
	Links                     []v1alpha1.AppLink                 `json:"links,omitempty"`
	Maintainers               []v1alpha1.Maintainer              `json:"maintainers,omitempty"`
	Maturity                  string                             `json:"maturity,omitempty"`
	MinKubeVersion            string                             `json:"minKubeVersion,omitempty"`
	NativeAPIs                []metav1.GroupVersionKind          `json:"nativeAPIs,omitempty"`
	Provider                  v1alpha1.AppLink                   `json:"provider,omitempty"`
}

func marshal(p interface{}) (string, error) {
	buf := &bytes.Buffer{}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return "", err
	}
	out := &bytes.Buffer{}
	if err := json.Compact(out, buf.Bytes()); err != nil {
		return "", err
	}
	return out.String(), nil
}

type result struct {
	CsvJSON string `json:"csvJson,omitempty"`
	Value string `json:"value,omitempty"`
	Error string `json:"error,omitempty"`
}

func main() {
	var inputs []string
	if err := json.NewDecoder(os.Stdin).Decode(&inputs); err != nil {
		panic(err)
	}
	out := make([]result, 0, len(inputs))
	for _, in := range inputs {
		csvJSON := ""
		if y, ok := strings.CutPrefix(in, "yaml:"); ok {
			b, err := k8syaml.ToJSON([]byte(y))
			if err != nil {
				panic(err)
			}
			in, csvJSON = string(b), string(b)
		}
		var csv v1alpha1.ClusterServiceVersion
		if err := json.Unmarshal([]byte(in), &csv); err != nil {
			out = append(out, result{Error: err.Error()})
			continue
		}
		v, err := marshal(&CSVMetadata{
			Annotations:               csv.GetAnnotations(),
			APIServiceDefinitions:     csv.Spec.APIServiceDefinitions,
			CustomResourceDefinitions: csv.Spec.CustomResourceDefinitions,
			Description:               csv.Spec.Description,
			DisplayName:               csv.Spec.DisplayName,
			InstallModes:              csv.Spec.InstallModes,
			Keywords:                  csv.Spec.Keywords,
			Labels:                    csv.GetLabels(),
			Links:                     csv.Spec.Links,
			Maintainers:               csv.Spec.Maintainers,
			Maturity:                  csv.Spec.Maturity,
			MinKubeVersion:            csv.Spec.MinKubeVersion,
			NativeAPIs:                csv.Spec.NativeAPIs,
			Provider:                  csv.Spec.Provider,
		})
		if err != nil {
			out = append(out, result{Error: err.Error()})
			continue
		}
		out = append(out, result{CsvJSON: csvJSON, Value: v})
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
