/** The registry API's messages (operator-registry pkg/api) as plain data, field names as in the proto. */
export interface ApiDeprecation {
  message: string;
}
export interface ApiGroupVersionKind {
  group: string;
  version: string;
  kind: string;
  plural: string;
}
export interface ApiKeyValue {
  type: string;
  value: string;
}

/** `api.Bundle` as plain data, field names as in the proto. */
export interface ApiBundle {
  csvName: string;
  packageName: string;
  channelName: string;
  csvJson: string;
  object: string[];
  bundlePath: string;
  providedApis: ApiGroupVersionKind[];
  requiredApis: ApiGroupVersionKind[];
  version: string;
  skipRange: string;
  dependencies: ApiKeyValue[];
  properties: ApiKeyValue[];
  replaces: string;
  skips: string[];
  deprecation: ApiDeprecation | null;
}

export interface ApiChannel {
  name: string;
  csvName: string;
  deprecation: ApiDeprecation | null;
}

export interface ApiPackage {
  name: string;
  channels: ApiChannel[];
  defaultChannelName: string;
  deprecation: ApiDeprecation | null;
}

export interface ApiChannelEntry {
  packageName: string;
  channelName: string;
  bundleName: string;
  replaces: string;
}
