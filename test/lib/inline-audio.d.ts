// Vite's `?inline` import of a binary fixture: its data URL (base64), so a unit test reads a committed clip wherever
// its runtime has no file system.
declare module "*.wav?inline" {
  const dataUrl: string;
  export default dataUrl;
}
