// GET /docs: Swagger UI over the service's own /openapi.json. Started from this file (not an
// inline script) so the page keeps script-src 'self'. The validator badge is off: it would
// send the document's address to another host.
document.addEventListener("DOMContentLoaded", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.openapiUrl,
    domNode: root,
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
