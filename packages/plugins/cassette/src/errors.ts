/** The cassette plugin's error codes. */
export const CassetteErrorCodes = Object.freeze({
  /** A request that no recorded exchange matches (the message shows the closest one). */
  CASSETTE_MISMATCH: "ANTLER_ERR_CASSETTE_MISMATCH",
  /** More requests than the cassette recorded. */
  CASSETTE_EXHAUSTED: "ANTLER_ERR_CASSETTE_EXHAUSTED",
});
