/** The kernel's own version; plugin `kernel` ranges are checked against it. Kept in sync with package.json by a test. */
export const KERNEL_VERSION = "0.1.0";
