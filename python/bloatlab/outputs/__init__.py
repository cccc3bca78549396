"""What bloatlab shows and writes about results: figures (:mod:`.plot`), the HTML report of
a sweep or run (:mod:`.report`), console tables of a run summary (:mod:`.tables`) and the
number formatting they share (:mod:`.numbers`)."""
