// Package registry transcribes the operator-registry pkg/registry types the bundle renderer
// decodes (types.go; csv.go GetOperatorImages's local types), so that Go names them registry.X
// in its errors as opm does.
package registry

import (
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
)

// operator-registry pkg/registry (csv.go GetOperatorImages's local types; types.go).
type dep struct {
	Name string
	Spec appsv1.DeploymentSpec
}
type strategySpec struct {
	Deployments []dep
}
type strategy struct {
	Name string       `json:"strategy"`
	Spec strategySpec `json:"spec"`
}

// CsvSpec is GetOperatorImages's local csvSpec (exported here so that main can use it; Go names it registry.csvSpec only in this comment).
type csvSpec struct {
	Install strategy
}
type Property struct {
	Type  string          `json:"type" yaml:"type"`
	Value json.RawMessage `json:"value" yaml:"value"`
}
type PropertiesFile struct {
	Properties []Property `json:"properties" yaml:"properties"`
}
type Annotations struct {
	PackageName        string `json:"operators.operatorframework.io.bundle.package.v1"`
	Channels           string `json:"operators.operatorframework.io.bundle.channels.v1"`
	DefaultChannelName string `json:"operators.operatorframework.io.bundle.channel.default.v1"`
}
type AnnotationsFile struct {
	Annotations Annotations `json:"annotations" yaml:"annotations"`
}

// CsvSpec lets main allocate a csvSpec (a type error names the type registry.csvSpec).
type CsvSpec = csvSpec
