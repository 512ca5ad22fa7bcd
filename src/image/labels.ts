/** The image labels opm reads and writes to tell catalog images from bundle images. */
/** The catalog image label: where the catalog lives in the image. */
export const LABEL_CONFIGS = "operators.operatorframework.io.index.configs.v1";
/** The bundle image label naming the package. */
export const LABEL_BUNDLE_PACKAGE = "operators.operatorframework.io.bundle.package.v1";
/** The label of the (unsupported) SQLite index images. */
export const LABEL_DATABASE = "operators.operatorframework.io.index.database.v1";
