module example.com/layered

go 1.26.0
