/**
 * The /docs page: Scalar's API reference, loaded from its CDN (no build step, nothing to
 * vendor), reading the document the gateway serves. Plain HTML; the reference renders it.
 */
export const SCALAR_CDN = "https://cdn.jsdelivr.net/npm/@scalar/api-reference";

export function docsPage(documentUrl: string): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Railgate API reference</title>
  </head>
  <body>
    <noscript>The API reference needs JavaScript; the document itself is at <a href="${documentUrl}">${documentUrl}</a>.</noscript>
    <script id="api-reference" data-url="${documentUrl}"></script>
    <script src="${SCALAR_CDN}"></script>
  </body>
</html>
`;
}
