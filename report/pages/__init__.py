"""One module per page (or group of pages): each builds its context and charts from a
Dataset and renders its template through the Site."""
