/**
 * Comment-preserving YAML editing (the `yaml` package's Document API), for `opcat template
 * add-bundle`, which edits a template the way a person would: comments, key order, quoting and
 * indentation of everything it does not touch stay as they are. Not a reader of opm's inputs: what
 * opm reads goes through the go-yaml v2 port (`parseGoYamlDocument`, src/yaml/load.ts).
 */
export {
  isMap,
  isScalar,
  isSeq,
  parseDocument,
  type Document,
  type Node,
  type Pair,
  type YAMLMap,
  type YAMLSeq,
} from "yaml";
