/** Types of tools/bundle.mjs, for the test that holds the built command's shape. */
export const BUNDLE_DIR: string;
export function loadedFiles(dir?: string): Set<string>;
