/** The plain provisioner (`rukpak.io/plain`): a bundle's `manifests/` applied as they are. */
import { PLAIN_PROVISIONER } from "./api.js";
import { readPlainObjects } from "./content.js";
import type { Provisioner } from "./provisioner.js";

export const plainProvisioner: Provisioner = {
  id: PLAIN_PROVISIONER,
  formats: ["plain"],
  async desired(_bundle, _instance, { dir }) {
    return { objects: readPlainObjects(dir), format: "plain" };
  },
};
