// Files the bundler imports as binary data (wrangler.jsonc `rules`, type Data).
declare module "*.bson" {
  const data: ArrayBuffer;
  export default data;
}
